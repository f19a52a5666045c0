import { findCodeRegions, type CodeRegion } from './find-code-regions';

/** A piece of a prompt that may carry a request of its own. */
export type Clause = {
  /** The clause without its joining word or list marker ("then write tests" gives "write tests"). */
  text: string;
  start: number;
  end: number;
};

// A mark after these ends no sentence: "1. explain X", "e.g. this", "U.S.", "etc.", "vs."
const NOT_AN_END = String.raw`(?:^|\n)\s*\d{1,2}|\b[a-z]\.[a-z]|\be\.g|\bi\.e|\betc|\bvs`;
// Where people join requests: sentence ends, line breaks, semicolons and coordinating words. These
// only propose cut points; whether a cut separates two requests is decided by the model's scores.
// A run of . ! ? is tried from its first mark only (from its second when the first follows
// NOT_AN_END), and the spaces before a joining word from their first (or the first after the
// newlines \n+ took): tried from every position, each attempt ran to the end of the run and failed
// as the one before it had, so 20,000 dots or spaces took 0.4-0.5 s.
const BOUNDARY = new RegExp(
  String.raw`(?:(?<![.!?])(?<!${NOT_AN_END})|(?<=(?:${NOT_AN_END})[.!?]))[.!?]+(?=\s)|\n+|;|` +
    String.raw`(?:,|(?<![^\S\n]\n*))\s+(?:and then|and also|` +
    String.raw`and after that|after that|afterwards|and once that(?: is|'s) done|once that(?: is|'s) done|and finally|` +
    String.raw`finally|while you(?:'re| are) at it|as well as|then|also|plus|and|n|&|\+)(?=\s)`,
  'gi',
);
const LEADING_FILLER =
  /^(?:\s|[-*•]|\d+[.)]|\(\d+\)|first(?:ly)?,?|then,?|also,?|and,?|finally,?|after that,?|next,?|can you|could you|please|pls)+\s*/i;
/** Prompts rarely hold more requests than this; the cap keeps long pastes cheap. */
const MAX_CLAUSES = 8;

/**
 * Cuts a prompt at its boundaries, outside pasted code (a fenced block stays whole, attached to
 * the clause it sits in). Returns one clause per non-empty piece, at most eight. `code` may be
 * passed when the caller already found the code regions.
 */
export function splitClauses(text: string, code: readonly CodeRegion[] = findCodeRegions(text)): Clause[] {
  const mask = new Uint8Array(text.length);
  for (const region of code) mask.fill(1, region.start, Math.min(region.end, text.length));
  const inCode = (position: number) => mask[position] === 1;
  const clauses: Clause[] = [];
  let start = 0;
  const push = (end: number) => {
    const raw = text.slice(start, end);
    const filler = raw.match(LEADING_FILLER)?.[0].length ?? 0;
    const trimmedEnd = raw.trimEnd().length;
    if (trimmedEnd > filler) clauses.push({ text: raw.slice(filler, trimmedEnd), start: start + filler, end: start + trimmedEnd });
  };
  for (const match of text.matchAll(BOUNDARY)) {
    if (inCode(match.index)) continue;
    push(match.index);
    start = match.index + match[0].length;
  }
  push(text.length);
  const isCodeOnly = (clause: Clause) => {
    for (let position = clause.start; position < clause.end; position++) {
      if (!inCode(position) && !/\s/.test(text[position])) return false;
    }
    return true;
  };
  const merged = attachCodeOnlyClauses(
    text,
    clauses.map((clause) => ({ ...clause, codeOnly: isCodeOnly(clause) })),
  );
  if (merged.length <= MAX_CLAUSES) return merged;
  const last = merged[MAX_CLAUSES - 1];
  return [...merged.slice(0, MAX_CLAUSES - 1), { text: text.slice(last.start).trimEnd(), start: last.start, end: text.trimEnd().length }];
}

// A pasted block belongs to the request before it ("fix this:\n<trace>"), or after it when it
// comes first ("<trace>\nhow do I fix this?"); alone it is not a request.
function attachCodeOnlyClauses(text: string, clauses: ReadonlyArray<Clause & { codeOnly: boolean }>): Clause[] {
  const result: Clause[] = [];
  let pendingStart: number | null = null;
  for (const { codeOnly, ...clause } of clauses) {
    if (codeOnly) {
      const previous = result.at(-1);
      if (previous) result[result.length - 1] = { ...previous, text: text.slice(previous.start, clause.end), end: clause.end };
      else pendingStart ??= clause.start;
      continue;
    }
    if (pendingStart !== null) {
      result.push({ text: text.slice(pendingStart, clause.end), start: pendingStart, end: clause.end });
      pendingStart = null;
    } else result.push(clause);
  }
  if (pendingStart !== null) result.push({ text: text.slice(pendingStart).trimEnd(), start: pendingStart, end: text.trimEnd().length });
  return result;
}
