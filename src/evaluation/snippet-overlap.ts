import { readFileSync } from 'node:fs';
import { AppError, badInput } from '../errors';
import { snippetShape } from '../search/boilerplate';
import { snippetIntent } from '../search/choose-snippets';
import { formatTable } from './evaluate-retrieval';

/**
 * Snippet scoring for the retrieval evaluation: a question may label the lines that answer it
 * (`"lines": {"lib/Pool.js": [[120, 148]]}`), and a search's answer is scored by whether the first
 * snippet of the first labelled file it returns overlaps them: what a user reads first, and what
 * the model gets first. Pure: run-retrieval-eval.ts runs the searches.
 */

/** 1-based inclusive line ranges that answer a question, per file. */
export type LineLabels = ReadonlyMap<string, ReadonlyArray<readonly [number, number]>>;

/** A search's answer as far as snippets go: files best first, each with its snippets in the order shown. */
export type AnsweredFile = {
  path: string;
  language?: string | null;
  snippets: ReadonlyArray<{ startLine: number; endLine: number; content?: string }>;
};

/** Whether an answer's very first snippet is boilerplate (imports, a license header…), as boilerplate.ts reads it. */
export function leadsWithBoilerplate(files: readonly AnsweredFile[]): boolean {
  const [file] = files;
  const content = file?.snippets[0]?.content;
  return content !== undefined && snippetShape({ content, language: file.language ?? null, path: file.path }).boilerplate;
}

/** Snippets asked for per question: REST's default limit, the service's default snippets per file. */
export const SNIPPET_SEARCH = { limit: 20, maxPerFile: 3 } as const;

function rangesOf(value: unknown, where: string): Array<[number, number]> {
  if (!Array.isArray(value) || value.length === 0) throw badInput(`${where}: each "lines" entry must be a non-empty array of [start, end]`);
  return value.map((range) => {
    const [start, end] = Array.isArray(range) ? (range as unknown[]) : [];
    if (!Array.isArray(range) || range.length !== 2 || !Number.isInteger(start) || !Number.isInteger(end))
      throw badInput(`${where}: ${JSON.stringify(range)} is not a [start, end] pair of line numbers`);
    if ((start as number) < 1 || (end as number) < (start as number))
      throw badInput(`${where}: [${String(start)}, ${String(end)}] is not a range of 1-based lines`);
    return [start as number, end as number];
  });
}

/**
 * The `lines` labels of a questions file (JSON Lines, as parseQuestions reads it), one entry per
 * question in the same order, null where a question has none. Throws BAD_USER_INPUT naming the line.
 */
export function parseLineLabels(text: string, source = 'questions'): Array<LineLabels | null> {
  const labels: Array<LineLabels | null> = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((line, index) => {
      if (!line.trim()) return;
      const where = `${source} line ${index + 1}`;
      // parseQuestions has already refused a line that is not a JSON object.
      const { lines } = JSON.parse(line) as { lines?: unknown };
      if (lines === undefined) {
        labels.push(null);
        return;
      }
      if (typeof lines !== 'object' || lines === null || Array.isArray(lines))
        throw badInput(`${where}: "lines" must be an object of path → [[start, end], ...]`);
      labels.push(new Map(Object.entries(lines).map(([path, ranges]) => [path, rangesOf(ranges, `${where} "${path}"`)])));
    });
  return labels;
}

/** parseLineLabels of a questions file loadQuestions has read; a bad label stops the run with its line number. */
export function loadLineLabels(file: string): Array<LineLabels | null> {
  try {
    return parseLineLabels(readFileSync(file, 'utf8'), file);
  } catch (error) {
    process.stderr.write(`error: ${error instanceof AppError ? error.userMessage : (error as Error).message}\n`);
    process.exit(2);
  }
}

/** Where the first snippet of the first labelled file of an answer falls. */
export type SnippetOutcome =
  | { found: false }
  | {
      found: true;
      path: string;
      rank: number;
      overlaps: boolean;
      anyOverlaps: boolean;
      /** The snippets' lines, as shown. */ snippets: Array<[number, number]>;
    };

const overlaps = (snippet: { startLine: number; endLine: number }, ranges: ReadonlyArray<readonly [number, number]>) =>
  ranges.some(([start, end]) => snippet.startLine <= end && snippet.endLine >= start);

/** Scores one answer against a question's labels: the first file of the answer that has labels, and its first snippet. */
export function snippetOutcome(files: readonly AnsweredFile[], labels: LineLabels): SnippetOutcome {
  const rank = files.findIndex((file) => labels.has(file.path));
  if (rank === -1) return { found: false };
  const file = files[rank];
  const ranges = labels.get(file.path)!;
  const [first] = file.snippets;
  return {
    found: true,
    path: file.path,
    rank: rank + 1,
    overlaps: first !== undefined && overlaps(first, ranges),
    anyOverlaps: file.snippets.some((snippet) => overlaps(snippet, ranges)),
    snippets: file.snippets.map((snippet) => [snippet.startLine, snippet.endLine]),
  };
}

/**
 * One strategy and mode's snippet figures: of the labelled questions, how many found a labelled file,
 * and how many of those led with answering lines.
 */
export type SnippetFigures = {
  strategy: string;
  mode: string;
  labelled: number;
  found: number;
  firstOverlaps: number;
  anyOverlaps: number;
  /** Answers to questions that ask for no boilerplate whose very first snippet is boilerplate (boilerplate.ts). */
  boilerplateFirst: number;
};

export function scoreSnippets(options: {
  strategy: string;
  mode: string;
  outcomes: readonly SnippetOutcome[];
  boilerplateFirst?: number;
}): SnippetFigures {
  const found = options.outcomes.filter((outcome): outcome is Extract<SnippetOutcome, { found: true }> => outcome.found);
  return {
    strategy: options.strategy,
    mode: options.mode,
    labelled: options.outcomes.length,
    found: found.length,
    firstOverlaps: found.filter((outcome) => outcome.overlaps).length,
    anyOverlaps: found.filter((outcome) => outcome.anyOverlaps).length,
    boilerplateFirst: options.boilerplateFirst ?? 0,
  };
}

/**
 * Asks every labelled question once more, as the edges do (several snippets per file), and scores
 * its first snippet; questions without labels are skipped.
 */
export async function measureSnippets(options: {
  strategy: string;
  mode: string;
  questions: ReadonlyArray<{ q: string }>;
  labels: ReadonlyArray<LineLabels | null>;
  search: (question: string) => Promise<readonly AnsweredFile[]>;
}): Promise<SnippetFigures & { outcomes: Array<SnippetOutcome & { q: string; leadsWithBoilerplate?: string }> }> {
  const outcomes: Array<SnippetOutcome & { q: string; leadsWithBoilerplate?: string }> = [];
  let boilerplateFirst = 0;
  for (const [index, question] of options.questions.entries()) {
    const labels = options.labels[index];
    if (!labels) continue;
    const answer = await options.search(question.q);
    const asksForBoilerplate = [...snippetIntent(question.q)].some((kind) => kind !== 'declarations');
    const boilerplate = !asksForBoilerplate && leadsWithBoilerplate(answer);
    if (boilerplate) boilerplateFirst += 1;
    outcomes.push({ q: question.q, ...snippetOutcome(answer, labels), ...(boilerplate ? { leadsWithBoilerplate: answer[0].path } : {}) });
  }
  return { ...scoreSnippets({ strategy: options.strategy, mode: options.mode, outcomes, boilerplateFirst }), outcomes };
}

const share = (part: number, whole: number) => (whole === 0 ? '-' : (part / whole).toFixed(3));

/**
 * The snippet table: per strategy and mode, the labelled questions, how many found a labelled file,
 * the share whose first (any) snippet overlapped the labels, and the answers led by boilerplate.
 */
export function formatSnippetTable(rows: ReadonlyArray<SnippetFigures & { set?: string }>): string {
  const withSet = rows.some((row) => row.set !== undefined);
  return [
    `Snippets (first ${SNIPPET_SEARCH.limit} snippets, ${SNIPPET_SEARCH.maxPerFile} per file): ` +
      'does the first snippet of the first labelled file overlap the lines that answer?',
    formatTable(
      [...(withSet ? ['set'] : []), 'strategy', 'mode', 'labelled', 'file found', 'first overlaps', 'any overlaps', 'boilerplate first'],
      rows.map((row) => [
        ...(withSet ? [row.set ?? '-'] : []),
        row.strategy,
        row.mode,
        String(row.labelled),
        String(row.found),
        share(row.firstOverlaps, row.found),
        share(row.anyOverlaps, row.found),
        String(row.boilerplateFirst),
      ]),
    ),
  ].join('\n');
}
