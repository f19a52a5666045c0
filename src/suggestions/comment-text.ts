const BLOCK_OPEN = /^\s*\/\*+!?/;
// Opening and closing together, so that `/**/` leaves nothing behind; an unterminated block keeps all after its opening.
const BLOCK = /^\s*\/\*+!?([\s\S]*?)\*+\/\s*$/;
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
    lines = (BLOCK.exec(raw)?.[1] ?? raw.replace(BLOCK_OPEN, '')).split('\n').map((line) => line.replace(BLOCK_LINE_STAR, ''));
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

/** A comment with no letter or digit (`//`, `# ----`) gives the model nothing to follow. */
export function isInstruction(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text);
}
