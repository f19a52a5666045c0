import type { Point, Range } from 'web-tree-sitter';

const isSpace = (code: number) => code === 32 || code === 9 || code === 13 || code === 12 || code === 11;

/**
 * Rows of a source string, with the conversions between string indices and points. Indices and
 * columns are UTF-16 code units, as web-tree-sitter reports them when it parses a JS string.
 */
export class LineIndex {
  readonly source: string;
  /** Index where each row starts; row n ends just before `starts[n + 1] - 1` (its `\n`). */
  private readonly starts: number[];

  constructor(source: string) {
    this.source = source;
    const starts = [0];
    for (let newline = source.indexOf('\n'); newline !== -1; newline = source.indexOf('\n', newline + 1)) starts.push(newline + 1);
    this.starts = starts;
  }

  /** Rows in the source; a trailing newline opens one more, empty, row (as editors show it). */
  get rowCount(): number {
    return this.starts.length;
  }

  get lastRow(): number {
    return this.starts.length - 1;
  }

  lineStart(row: number): number {
    return this.starts[row];
  }

  /** Index just past the row's last character, before its `\n` (and before a `\r` that precedes it). */
  lineEnd(row: number): number {
    let end = row + 1 < this.starts.length ? this.starts[row + 1] - 1 : this.source.length;
    if (end > this.starts[row] && this.source.charCodeAt(end - 1) === 13) end -= 1;
    return end;
  }

  lineText(row: number): string {
    return this.source.slice(this.lineStart(row), this.lineEnd(row));
  }

  /** The row holding an index; an index on a `\n` belongs to the row that newline ends. */
  rowOf(index: number): number {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.starts[middle] <= index) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  pointAt(index: number): Point {
    const row = this.rowOf(index);
    return { row, column: index - this.starts[row] };
  }

  indexAt(point: Point): number {
    return this.starts[point.row] + point.column;
  }

  /** Index of the row's first character that is not a space or tab, or null for a blank row. */
  firstNonBlank(row: number): number | null {
    const end = this.lineEnd(row);
    for (let index = this.starts[row]; index < end; index += 1) if (!isSpace(this.source.charCodeAt(index))) return index;
    return null;
  }

  isBlank(row: number): boolean {
    return this.firstNonBlank(row) === null;
  }

  /** Leading spaces and tabs, each counted as one column (a file mixing them is judged as written). */
  indentOf(row: number): number {
    const first = this.firstNonBlank(row);
    return (first ?? this.lineEnd(row)) - this.starts[row];
  }

  /** Whether only spaces and tabs lie between two indices (in either order). */
  isBlankBetween(from: number, to: number): boolean {
    for (let index = Math.min(from, to); index < Math.max(from, to); index += 1) {
      const code = this.source.charCodeAt(index);
      if (!isSpace(code) && code !== 10) return false;
    }
    return true;
  }

  /** The range covering rows `startRow` to `endRow` inclusive, newline of the last row included; for `includedRanges`. */
  rangeOfRows(startRow: number, endRow: number): Range {
    const startIndex = this.starts[startRow];
    const endIndex = endRow + 1 < this.starts.length ? this.starts[endRow + 1] : this.source.length;
    return { startIndex, endIndex, startPosition: { row: startRow, column: 0 }, endPosition: this.pointAt(endIndex) };
  }
}
