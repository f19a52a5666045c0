import type { Node } from '../../parsing';
import { FUNCTION_SHAPES } from '../function-shapes';
import type { BodyStyle } from '../function-shapes';
import { generation } from '../intent';
import type { Detection, IntentContext } from '../intent';

// Children of a body that open it or declare parameters rather than hold statements (Kotlin `{ x ->`, Ruby `{ |x|`).
const BODY_HEADER_TYPES = new Set(['{', 'do', '->', 'lambda_parameters', 'block_parameters']);
const BODY_CLOSERS = new Set(['}', 'end']);

/**
 * Rule 3. The cursor inside the body of a function, method, constructor or lambda whose body holds
 * no statements (whitespace and comments only): generation of type empty_function. For Python, the
 * cursor must be on an indented line below the `def` header.
 *
 * The nearest function around the last code token before the cursor decides, so an empty `if`
 * block in a function with statements is not an empty function, and an empty lambda inside one is.
 */
export function detectEmptyFunction(context: IntentContext): Detection | null {
  const shapes = FUNCTION_SHAPES[context.grammar.info.name];
  for (let node = lastCodeTokenBeforeCursor(context); node; node = node.parent) {
    const style = shapes.get(node.type);
    if (style) return isInEmptyBody(context, node, style) ? generation('empty_function') : null;
  }
  return null;
}

/**
 * The inside of an empty body, between its opening (brace, parameters, header) and its closing
 * delimiter; `headerLineToo` says whether a cursor still on the header's line counts as inside
 * (yes between braces, no after `def name` where the user may still be typing the header).
 */
type EmptyBody = { innerStart: number; innerEnd: number; headerLineToo: boolean };

// Null from the helpers below means the body has statements, or is an expression rather than a block.
function isInEmptyBody(context: IntentContext, fn: Node, style: BodyStyle): boolean {
  const body =
    style === 'braces' ? emptyBraceBody(context, fn) : style === 'def-end' ? emptyDefEndBody(context, fn) : emptyIndentedBody(context, fn);
  if (!body) return false;
  const { cursor, lines, point } = context;
  if (cursor < body.innerStart || cursor > body.innerEnd) return false;
  return body.headerLineToo || point.row > lines.rowOf(body.innerStart);
}

function emptyBraceBody(context: IntentContext, fn: Node): EmptyBody | null {
  const body = braceBodyOf(fn);
  if (!body) return null;
  const children = body.children;
  const closer = children.length > 1 && BODY_CLOSERS.has(children.at(-1)!.type) ? children.at(-1)! : null;
  let innerStart = children[0].endIndex;
  for (const child of children.slice(1, closer ? -1 : undefined)) {
    if (context.grammar.isComment(child) || child.startIndex === child.endIndex) continue;
    if (!BODY_HEADER_TYPES.has(child.type)) return null;
    innerStart = child.endIndex;
  }
  // A missing closer (the user is still typing) sits right after the opener; the body then runs on to the cursor.
  const innerEnd = closer && !closer.isMissing ? closer.startIndex : Number.POSITIVE_INFINITY;
  return { innerStart, innerEnd, headerLineToo: true };
}

function braceBodyOf(fn: Node): Node | null {
  // A Kotlin lambda is its own braces.
  if (fn.type === 'lambda_literal') return fn;
  let body =
    fn.childForFieldName('body') ?? fn.namedChildren.findLast((child) => child.type === 'block' || child.type === 'function_body') ?? null;
  // Kotlin wraps the block in function_body (which can also be `= expression`).
  if (body?.type === 'function_body') body = body.namedChild(0);
  const opener = body?.child(0)?.type;
  return body && (opener === '{' || opener === 'do') ? body : null;
}

// Ruby: `def name(params)` ... `end`; an empty body leaves no node between the header and `end`.
function emptyDefEndBody(context: IntentContext, fn: Node): EmptyBody | null {
  const closer = fn.lastChild;
  if (closer?.type !== 'end') return null;
  const header = fn.childForFieldName('parameters') ?? fn.childForFieldName('name');
  if (!header) return null;
  const isComment = (node: Node) => context.grammar.isComment(node);
  const inside = fn.namedChildren.filter(
    (child) => child.startIndex >= header.endIndex && child.startIndex < closer.startIndex && !isComment(child),
  );
  if (inside.some((child) => child.type !== 'body_statement' || child.namedChildren.some((statement) => !isComment(statement))))
    return null;
  return { innerStart: header.endIndex, innerEnd: closer.isMissing ? Number.POSITIVE_INFINITY : closer.startIndex, headerLineToo: false };
}

// Python: the body of `def name():` is the indented block below it; tree-sitter leaves an empty one zero-width after the colon.
function emptyIndentedBody(context: IntentContext, fn: Node): EmptyBody | null {
  const { lines, point, cursor } = context;
  const colon = fn.children.find((child) => child.type === ':');
  const body = fn.childForFieldName('body');
  if (!colon || (body && body.namedChildren.some((child) => !context.grammar.isComment(child)))) return null;
  // On an indented line of its own: only whitespace before the cursor, deeper than the `def`.
  if (!lines.isBlankBetween(lines.lineStart(point.row), cursor) || point.column <= fn.startPosition.column) return null;
  return { innerStart: colon.endIndex, innerEnd: Number.POSITIVE_INFINITY, headerLineToo: false };
}

/** The token just before the cursor, skipping whitespace and comments: the cursor's syntactic neighbour. */
function lastCodeTokenBeforeCursor(context: IntentContext): Node | null {
  const { source, tree, grammar } = context;
  let index = context.cursor;
  for (;;) {
    index -= 1;
    while (index >= 0 && /\s/.test(source[index])) index -= 1;
    if (index < 0) return null;
    const node = tree.rootNode.descendantForIndex(index, index + 1);
    if (!node || node.startIndex > index || node.endIndex <= index) return null;
    const comment = enclosingComment(node, grammar.isComment.bind(grammar));
    if (!comment) return node;
    index = comment.startIndex;
  }
}

function enclosingComment(node: Node, isComment: (node: Node) => boolean): Node | null {
  for (let current: Node | null = node; current; current = current.parent) if (isComment(current)) return current;
  return null;
}
