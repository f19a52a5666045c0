import type { GrammarName, LineIndex, Range, Tree } from '../parsing';

/** How much of a large file intent detection parses. */
export type ParseWindowOptions = {
  /** Files up to this many characters are parsed whole. Default 12,000 (about 3 ms at tree-sitter's 3 to 4 MB/s). */
  wholeFileMaxChars?: number;
  /** A window reaches at least this many rows above the cursor. Default 80. */
  rowsAbove?: number;
  /** A window reaches this many rows below the cursor. Default 20. */
  rowsBelow?: number;
  /** Windows tried, each starting further up, before the whole file is parsed after all. Default 2. */
  attempts?: number;
};

/** Rows `startRow` to `endRow` around the cursor, plus the lines that give them context, as ranges to parse. */
export type ParseWindow = { startRow: number; endRow: number; includedRanges: Range[] };

const DEFAULTS: Required<ParseWindowOptions> = { wholeFileMaxChars: 12_000, rowsAbove: 80, rowsBelow: 20, attempts: 2 };
// How far above the minimum start a window may begin, looking for a clean place to start.
const SEARCH_ROWS = 400;
// A window starts on a line that begins a declaration or statement, not one that continues something (`)`, `.then`, ` * `).
const START_CHARACTER = /[A-Za-z_@#$/]/;
const COMMENT_LINE = /^(?:\/\/|\/\*|\*|#|--)/;
const CLOSING_LINE = /^(?:[}\])]|end\b)/;

/**
 * The windows to try for a file, nearest first; none when the file is small enough to parse whole.
 *
 * Parsing is linear in the file (about 15 ms for 2,000 lines of TypeScript), but every rule looks
 * near the cursor, so a large file is parsed from a little above the cursor to a little below it.
 * The window starts on a line after a blank line, indented no deeper than anything between it and
 * the cursor (a new statement or declaration, seldom the middle of a construct), and ends the same
 * way. With it the parser gets the lines that frame it: the headers of the scopes it is in (each
 * line above less indented than the last: `class Foo {`, `impl Bar {`, `def baz():`), the lines
 * that close those scopes below it, and PHP's `<?php`. Methods are then seen inside their class.
 */
export function parseWindows(options: { lines: LineIndex; cursorRow: number; grammar: GrammarName } & ParseWindowOptions): ParseWindow[] {
  const { lines, cursorRow, grammar } = options;
  const settings = { ...DEFAULTS, ...withoutUndefined(options) };
  if (lines.source.length <= settings.wholeFileMaxChars) return [];
  return windowStarts(lines, cursorRow, settings).map((startRow) => {
    const endRow = windowEnd(lines, startRow, cursorRow + settings.rowsBelow);
    const headers = headerRows(lines, startRow);
    const contextRows = [
      ...(grammar === 'php' ? phpOpeningRows(lines, startRow) : []),
      ...headers,
      ...closingRows(lines, headers, startRow, endRow),
    ];
    return {
      startRow,
      endRow,
      includedRanges: toRanges(lines, [...contextRows.map((row) => [row, row] as const), [startRow, endRow] as const]),
    };
  });
}

/**
 * Whether a window's first line parsed as code. When a window starts inside a block comment or a
 * multi-line string (a paragraph of a docstring), its first line parses as an error, and the
 * window cannot be trusted.
 */
export function windowStartsCleanly(tree: Tree, lines: LineIndex, window: ParseWindow): boolean {
  if (window.startRow === 0 || !tree.rootNode.hasError) return true;
  const first = lines.firstNonBlank(window.startRow);
  if (first === null) return true;
  // An error that begins in the headers above is theirs (a signature cut short), not the window's.
  const windowStart = lines.lineStart(window.startRow);
  for (let node = tree.rootNode.descendantForIndex(first, first + 1); node; node = node.parent) {
    if ((node.isError || node.isMissing) && node.startIndex >= windowStart) return false;
  }
  return true;
}

function windowStarts(lines: LineIndex, cursorRow: number, settings: Required<ParseWindowOptions>): number[] {
  const lowest = cursorRow - settings.rowsAbove;
  if (lowest <= 0) return [0];
  let minIndent = Number.POSITIVE_INFINITY;
  for (let row = lowest + 1; row <= cursorRow; row += 1) if (!lines.isBlank(row)) minIndent = Math.min(minIndent, lines.indentOf(row));
  const starts: number[] = [];
  for (let row = lowest; row >= Math.max(0, lowest - SEARCH_ROWS) && starts.length < settings.attempts; row -= 1) {
    if (row === 0) {
      starts.push(0);
      break;
    }
    const first = lines.firstNonBlank(row);
    if (first === null) continue;
    const indent = lines.indentOf(row);
    if (indent <= minIndent && lines.isBlank(row - 1) && START_CHARACTER.test(lines.source[first])) starts.push(row);
    minIndent = Math.min(minIndent, indent);
  }
  return starts.length > 0 ? starts : [lowest];
}

// Each line above the window that is less indented than everything after it, up to column 0: the
// headers of the scopes the window is in. Allman braces (`{` alone) bring the line before them.
function headerRows(lines: LineIndex, startRow: number): number[] {
  const rows: number[] = [];
  let indent = lines.indentOf(startRow);
  for (let row = startRow - 1; row >= 0 && indent > 0; row -= 1) {
    if (lines.isBlank(row) || lines.indentOf(row) >= indent) continue;
    const text = lines.lineText(row).trim();
    if (!isSelfContainedHeader(text)) continue;
    rows.push(row);
    indent = lines.indentOf(row);
    if (text.startsWith('{')) {
      const declaration = previousNonBlankRow(lines, row);
      if (declaration !== null && isSelfContainedHeader(lines.lineText(declaration).trim())) rows.push(declaration);
      if (declaration !== null) row = declaration;
    }
  }
  return rows.reverse();
}

// A comment line, a closing line (`) {`, `}`) or half a multi-line signature would confuse the parser more than help it.
function isSelfContainedHeader(text: string): boolean {
  if (COMMENT_LINE.test(text) || /^[)\]}]/.test(text)) return false;
  let depth = 0;
  for (const character of text) {
    if (character === '(' || character === '[') depth += 1;
    else if (character === ')' || character === ']') depth -= 1;
  }
  return depth === 0;
}

// The window ends before a blank line and a line no deeper than its first: after a whole declaration or
// statement, so the parser does not see one cut in half.
function windowEnd(lines: LineIndex, startRow: number, lowest: number): number {
  if (lowest >= lines.lastRow) return lines.lastRow;
  const indent = lines.indentOf(startRow);
  for (let row = lowest; row < Math.min(lines.lastRow, lowest + SEARCH_ROWS); row += 1) {
    if (lines.isBlank(row) && !lines.isBlank(row + 1) && lines.indentOf(row + 1) <= indent) return row;
  }
  return lowest;
}

// Closing lines (`}`, `end`) of the scopes still open where the window ends, whether their headers are
// above the window or in it, so the parser sees every scope closed rather than a file cut short (some
// grammars then wrap everything in an error). A scope is open at the end when its header line is less
// indented than every line after it in the window.
function closingRows(lines: LineIndex, headers: number[], startRow: number, endRow: number): number[] {
  const open: number[] = [];
  let shallowest = Number.POSITIVE_INFINITY;
  const consider = (row: number) => {
    if (lines.isBlank(row)) return;
    const indent = lines.indentOf(row);
    if (indent < shallowest && !CLOSING_LINE.test(lines.lineText(row).trim())) open.push(row);
    shallowest = Math.min(shallowest, indent);
  };
  for (let row = endRow; row >= startRow && shallowest > 0; row -= 1) consider(row);
  for (const row of [...headers].reverse()) if (shallowest > 0) consider(row);
  const rows: number[] = [];
  let from = endRow + 1;
  for (const opener of open) {
    const indent = lines.indentOf(opener);
    for (let row = from; row <= lines.lastRow; row += 1) {
      if (lines.isBlank(row) || lines.indentOf(row) > indent) continue;
      if (CLOSING_LINE.test(lines.lineText(row).trim())) {
        rows.push(row);
        from = row + 1;
      }
      break;
    }
  }
  return rows;
}

function previousNonBlankRow(lines: LineIndex, row: number): number | null {
  for (let previous = row - 1; previous >= 0; previous -= 1) if (!lines.isBlank(previous)) return previous;
  return null;
}

// PHP code is only code after `<?php`; without it the whole window is HTML text.
function phpOpeningRows(lines: LineIndex, startRow: number): number[] {
  const open = lines.source.indexOf('<?php');
  if (open === -1) return [];
  const openRow = lines.rowOf(open);
  return openRow < startRow ? Array.from({ length: openRow + 1 }, (_, row) => row) : [];
}

function toRanges(lines: LineIndex, spans: ReadonlyArray<readonly [number, number]>): Range[] {
  const merged: Array<[number, number]> = [];
  for (const [start, end] of [...spans].sort((a, b) => a[0] - b[0])) {
    const last = merged.at(-1);
    if (last && start <= last[1] + 1) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged.map(([start, end]) => lines.rangeOfRows(start, end));
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
