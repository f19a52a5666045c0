import type { Grammar, LineIndex, Tree } from '../parsing';

/**
 * Rows holding code, that is something other than whitespace and comments, counted from the top
 * and stopping at `limit` (a small-file check never needs more, so large files cost a few nodes).
 * A token spanning rows (a template string) counts each of its non-blank rows.
 */
export function countCodeRows(options: { tree: Tree; grammar: Grammar; lines: LineIndex; limit: number }): number {
  const { tree, grammar, lines, limit } = options;
  const commentTypes = new Set(grammar.info.commentTypes);
  const cursor = tree.walk();
  let count = 0;
  let lastRow = -1;
  try {
    walk: for (;;) {
      const isComment = commentTypes.has(cursor.nodeType);
      if (!isComment && cursor.gotoFirstChild()) continue;
      if (!isComment) {
        const start = cursor.startIndex;
        const end = cursor.endIndex;
        for (let row = Math.max(cursor.startPosition.row, lastRow + 1); end > start && row <= cursor.endPosition.row; row += 1) {
          if (lines.isBlankBetween(Math.max(start, lines.lineStart(row)), Math.min(end, lines.lineEnd(row)))) continue;
          count += 1;
          lastRow = row;
          if (count >= limit) break walk;
        }
      }
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) break walk;
    }
  } finally {
    cursor.delete();
  }
  return count;
}

/** Common markers for files without a grammar: `//`, `#`, `--` line comments and `/* *\/` blocks. */
export function countCodeRowsByMarkers(source: string, limit: number): number {
  let count = 0;
  let inBlock = false;
  for (const line of source.split('\n')) {
    let text = line.trim();
    if (inBlock) {
      const close = text.indexOf('*/');
      if (close === -1) continue;
      inBlock = false;
      text = text.slice(close + 2).trim();
    }
    while (text.startsWith('/*')) {
      const close = text.indexOf('*/', 2);
      if (close === -1) {
        inBlock = true;
        text = '';
      } else {
        text = text.slice(close + 2).trim();
      }
    }
    if (text === '' || /^(?:\/\/|#|--)/.test(text)) continue;
    count += 1;
    if (count >= limit) break;
  }
  return count;
}
