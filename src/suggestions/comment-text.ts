const BLOCK_OPEN = /^\s*\/\*+!?/;
// Continuation lines of a block comment (` * text`), but not a lone closing `*/`.
const BLOCK_LINE_STAR = /^\s*\*+(?!\/)/;
// Line comments of every grammar we parse, plus the doc variants (`///`, `//!`, `#!`) and SQL/Lua `--`.
const LINE_MARKER = /^\s*(?:\/\/+!?|#+!?|--+)/;

/**
 * The words of a comment: markers (`//`, `#`, `--`, `/* *\/`, `/** *\/`, leading `*`, `///`, Ruby's
 * `=begin`/`=end`) and surrounding whitespace removed, lines kept apart by newlines, blank lines at
 * either end dropped.
 */
export function commentText(raw: string): string {
  let lines: string[];
  if (BLOCK_OPEN.test(raw)) {
    lines = blockBody(raw)
      .split('\n')
      .map((line) => line.replace(BLOCK_LINE_STAR, ''));
  } else if (/^\s*=begin/.test(raw)) {
    lines = raw.split('\n').slice(1);
    if (/^=end/.test(lines.at(-1) ?? '')) lines.pop();
  } else {
    lines = raw.split('\n').map((line) => line.replace(LINE_MARKER, ''));
  }
  const trimmed = lines.map((line) => line.trim());
  const first = trimmed.findIndex((line) => line !== '');
  if (first === -1) return '';
  const last = trimmed.findLastIndex((line) => line !== '');
  return trimmed.slice(first, last + 1).join('\n');
}

/**
 * What lies between a block comment's opening (`/*`, `/**`, `/*!`) and its closing (`*\/`, `**\/`); an unterminated
 * block keeps all after its opening, and `/**\/` leaves nothing. It was one regex, `^\s*\/\*+!?([\s\S]*?)\*+\/\s*$`,
 * which is cubic in a run of stars with no closing slash (3 KB of them held the API for 3.5 s): this finds the
 * closing from the end instead, and gives the regex's answer (the tests compare them on every short string).
 */
function blockBody(raw: string): string {
  const opening = BLOCK_OPEN.exec(raw)![0];
  const end = raw.trimEnd();
  if (!end.endsWith('*/')) return raw.slice(opening.length);
  let closing = end.length - 2;
  while (closing > 0 && end[closing - 1] === '*') closing -= 1;
  if (closing >= opening.length) return end.slice(opening.length, closing);
  // The opening's stars are the closing's too (`/**/`, `/*/`): with two or more, each takes one and nothing lies between.
  const stars = end.length - 2 - raw.indexOf('/');
  return stars >= 2 ? '' : raw.slice(opening.length);
}

/** A comment with no letter or digit (`//`, `# ----`) gives the model nothing to follow. */
export function isInstruction(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text);
}
