import { languageOf } from '../parsing/languages';
import { LineIndex } from '../parsing';
import { DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_LINES } from './chunk';
import type { Chunk, ChunkInput, ChunkOptions } from './chunk';

/** Rows `startRow` to `endRow`, 0-based and inclusive. */
export type RowRange = { startRow: number; endRow: number };

/** Options for `lineWindows`. */
export type LineWindowOptions = {
  maxChars: number;
  /** Rows the next window repeats from the end of the one before. Default 0. */
  overlapLines?: number;
};

/** Characters of rows `startRow` to `endRow` as one string, newlines between them included. */
export function rowsLength(lines: LineIndex, startRow: number, endRow: number): number {
  return lines.lineEnd(endRow) - lines.lineStart(startRow);
}

/** The text of rows `startRow` to `endRow`, without the last row's newline. */
export function rowsText(lines: LineIndex, range: RowRange): string {
  return lines.source.slice(lines.lineStart(range.startRow), lines.lineEnd(range.endRow));
}

/** The range without its blank rows at either end, or null when every row is blank. */
export function trimBlankRows(lines: LineIndex, range: RowRange): RowRange | null {
  let { startRow, endRow } = range;
  while (startRow <= endRow && lines.isBlank(startRow)) startRow += 1;
  while (endRow >= startRow && lines.isBlank(endRow)) endRow -= 1;
  return startRow <= endRow ? { startRow, endRow } : null;
}

/**
 * Cuts a range of rows into windows of at most `maxChars` (a single longer row is a window of its own),
 * each starting and ending on a non-blank row. A window repeats up to `overlapLines` rows of the one
 * before, as long as it still fits and moves forward.
 */
export function lineWindows(lines: LineIndex, range: RowRange, options: LineWindowOptions): RowRange[] {
  const overlap = Math.max(0, options.overlapLines ?? 0);
  const windows: RowRange[] = [];
  let next = range.startRow;
  while (next <= range.endRow) {
    while (next <= range.endRow && lines.isBlank(next)) next += 1;
    if (next > range.endRow) break;
    let end = next;
    while (end + 1 <= range.endRow && rowsLength(lines, next, end + 1) <= options.maxChars) end += 1;
    const window = trimBlankRows(lines, { startRow: next, endRow: end })!;
    windows.push(window);
    if (end >= range.endRow || trimBlankRows(lines, { startRow: end + 1, endRow: range.endRow }) === null) break;
    let start = Math.max(window.startRow + 1, end + 1 - overlap);
    // The repeated rows count against the next window's budget: drop them until the row after `end` fits.
    while (start <= end && rowsLength(lines, start, end + 1) > options.maxChars) start += 1;
    next = start;
  }
  return windows;
}

/** Line windows of a whole file, for files without a grammar: kind `lines`, no symbol. */
export function chunkLines(input: ChunkInput, options: ChunkOptions = {}): Chunk[] {
  const lines = new LineIndex(input.content);
  const windows = lineWindows(
    lines,
    { startRow: 0, endRow: lines.lastRow },
    {
      maxChars: options.maxChars ?? DEFAULT_MAX_CHARS,
      overlapLines: options.overlapLines ?? DEFAULT_OVERLAP_LINES,
    },
  );
  const language = languageOf(input.path);
  return windows.map((window) => ({
    path: input.path,
    language,
    kind: 'lines',
    symbol: null,
    startLine: window.startRow + 1,
    endLine: window.endRow + 1,
    content: rowsText(lines, window),
  }));
}
