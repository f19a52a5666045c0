import type { Node } from '../../parsing';
import { commentText, isInstruction } from '../comment-text';
import { COMPLETION, generation } from '../intent';
import type { Detection, IntentContext } from '../intent';

type Comment = { node: Node; start: number; end: number; startRow: number; endRow: number };

/**
 * Rule 1. The cursor on a comment (inside it, touching it, or after it with only spaces between on
 * its last line) or inside a block comment: completion. Otherwise a comment that ends on the line
 * right above, when only whitespace precedes the cursor on its line: generation with the comment
 * as the instruction (a run of line comments counts as one), or completion when it says nothing.
 */
export function detectComment(context: IntentContext): Detection | null {
  const { cursor, lines, point } = context;
  const nearby = commentsInRows(context, point.row - 1, point.row);
  const onCursor = nearby.some(
    (comment) =>
      (comment.start <= cursor && cursor <= comment.end) ||
      (comment.endRow === point.row && comment.end <= cursor && lines.isBlankBetween(comment.end, cursor)),
  );
  if (onCursor) return COMPLETION;
  if (point.row === 0 || !lines.isBlankBetween(lines.lineStart(point.row), cursor)) return null;

  const above = nearby.filter((comment) => comment.endRow === point.row - 1).at(-1);
  if (!above || !standsAlone(context, above)) return null;
  const run = [above];
  while (isLineComment(context, run[0]) && run[0].startRow > 0) {
    const previous = commentsInRows(context, run[0].startRow - 1, run[0].startRow - 1).find(
      (comment) => comment.endRow === run[0].startRow - 1 && isLineComment(context, comment) && standsAlone(context, comment),
    );
    if (!previous) break;
    run.unshift(previous);
  }
  const instruction = run
    .map((comment) => commentText(context.source.slice(comment.start, comment.end)))
    .join('\n')
    .trim();
  return isInstruction(instruction) ? generation('comment', instruction) : COMPLETION;
}

function commentsInRows(context: IntentContext, startRow: number, endRow: number): Comment[] {
  return context.grammar.commentsInRows(context.tree.rootNode, startRow, endRow).map((node) => {
    // Some grammars end a line comment after its newline (Rust doc comments); the comment ends where its text does.
    let end = node.endIndex;
    while (end > node.startIndex && /\s/.test(context.source[end - 1])) end -= 1;
    return { node, start: node.startIndex, end, startRow: node.startPosition.row, endRow: context.lines.rowOf(end) };
  });
}

// A comment trailing code (`total += 1 // running sum`) annotates that line; only comments on lines of their own instruct.
function standsAlone({ lines }: IntentContext, comment: Comment): boolean {
  return (
    lines.isBlankBetween(lines.lineStart(comment.startRow), comment.start) &&
    lines.isBlankBetween(comment.end, lines.lineEnd(comment.endRow))
  );
}

function isLineComment({ source }: IntentContext, comment: Comment): boolean {
  return comment.startRow === comment.endRow && !source.startsWith('/*', comment.start);
}
