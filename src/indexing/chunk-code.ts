import { GRAMMARS, LineIndex, loadGrammar } from '../parsing';
import type { Grammar, GrammarName, Node } from '../parsing';
import { DEFAULT_MAX_CHARS } from './chunk';
import type { Chunk, ChunkInput, ChunkKind } from './chunk';
import { lineWindows, rowsLength, rowsText, trimBlankRows } from './chunk-lines';
import type { RowRange } from './chunk-lines';

/** Options for `chunkCode`. */
export type ChunkCodeOptions = {
  grammar: GrammarName;
  /** Default 1,500. */
  maxChars?: number;
  /** The parse's time limit (ms): past it ParseBudgetExceeded is thrown. Default: none. */
  parseBudgetMs?: number;
};

// Node types across the grammars, by the role they play in a chunk. A type missing here is just "other code".
const FUNCTION_TYPES = new Set([
  'function_declaration',
  'generator_function_declaration',
  'function_definition',
  'function_item',
  'method_definition',
  'method_declaration',
  'method',
  'singleton_method',
  'constructor_declaration',
  'destructor_declaration',
  'operator_declaration',
  'method_signature',
  'abstract_method_signature',
  'function_signature',
  'secondary_constructor',
  'compact_constructor_declaration',
]);
// Members of these are methods.
const TYPE_TYPES = new Set([
  'class_declaration',
  'abstract_class_declaration',
  'class_definition',
  'class',
  'module',
  'interface_declaration',
  'enum_declaration',
  'struct_declaration',
  'record_declaration',
  'trait_declaration',
  'trait_item',
  'impl_item',
  'class_specifier',
  'struct_specifier',
  'object_declaration',
  'companion_object',
  'struct_item',
  'enum_item',
  'annotation_type_declaration',
]);
// Members of these are functions; the name still qualifies them.
const NAMESPACE_TYPES = new Set([
  'namespace_declaration',
  'file_scoped_namespace_declaration',
  'namespace_definition',
  'mod_item',
  'internal_module',
  'ERROR',
]);
// Declarations that carry another: the outer node's rows, the inner node's role.
const WRAPPER_TYPES = new Set([
  'export_statement',
  'decorated_definition',
  'template_declaration',
  'ambient_declaration',
  'type_definition',
  'expression_statement',
  'declaration',
]);
const VARIABLE_TYPES = new Set(['lexical_declaration', 'variable_declaration']);
const FUNCTION_VALUE_TYPES = new Set(['arrow_function', 'function_expression', 'function', 'generator_function']);
// Attach to the declaration right below them.
const PREFIX_TYPES = new Set(['attribute_item', 'decorator', 'annotation']);
const NAME_TYPES = new Set([
  'identifier',
  'type_identifier',
  'simple_identifier',
  'constant',
  'name',
  'property_identifier',
  'field_identifier',
  'qualified_identifier',
  'namespace_identifier',
  'scoped_identifier',
  'destructor_name',
  'operator_name',
]);
const BODY_TYPES = new Set([
  'class_body',
  'enum_class_body',
  'body_statement',
  'declaration_list',
  'field_declaration_list',
  'interface_body',
  'enum_body',
  'block',
  'statement_block',
]);

type Role = 'function' | 'type' | 'namespace' | 'other';

/** Rows of code that belong together: one declaration, a class header, a closing line, or other code. */
type Segment = RowRange & {
  kind: ChunkKind;
  symbol: string | null;
  /** Large declarations keep a chunk of their own; everything else merges with its neighbours. */
  named: boolean;
  /** The closing rows of a class (`}`, `end`): they join whatever chunk comes before. */
  closing: boolean;
  /** The class header (declaration line, fields): a merged chunk holding it is the class's. */
  header: boolean;
  /** The declaration to split when the segment does not fit, for types and namespaces. */
  container: Node | null;
  attachable: boolean;
};

type Scope = {
  /** Qualified name of the enclosing type or namespace, or null at the top level. */
  prefix: string | null;
  inType: boolean;
};

type Context = { lines: LineIndex; grammar: Grammar; maxChars: number; smallChars: number };

const qualify = (prefix: string | null, name: string | null) => (name === null ? prefix : prefix ? `${prefix}.${name}` : name);

// A node ending at column 0 ends with the newline of the row before.
const endRowOf = (node: Node) =>
  node.endPosition.column === 0 && node.endPosition.row > node.startPosition.row ? node.endPosition.row - 1 : node.endPosition.row;

function roleOf(node: Node): Role {
  if (FUNCTION_TYPES.has(node.type)) return 'function';
  if (TYPE_TYPES.has(node.type)) return 'type';
  if (NAMESPACE_TYPES.has(node.type)) return 'namespace';
  return 'other';
}

/** The declaration a node stands for: itself, or the one a wrapper (export, decorator, template, typedef) carries. */
function declarationOf(node: Node): { node: Node; role: Role } {
  if (roleOf(node) !== 'other') return { node, role: roleOf(node) };
  if (VARIABLE_TYPES.has(node.type)) {
    const declarators = node.namedChildren.filter((child) => child?.type === 'variable_declarator');
    if (declarators.length === 1 && FUNCTION_VALUE_TYPES.has(declarators[0].childForFieldName('value')?.type ?? ''))
      return { node: declarators[0], role: 'function' };
  }
  if (WRAPPER_TYPES.has(node.type)) {
    for (const child of node.namedChildren) {
      if (!child || child.type === 'decorator') continue;
      const inner = declarationOf(child);
      if (inner.role !== 'other') return inner;
    }
  }
  return { node, role: 'other' };
}

function nameOf(node: Node): string | null {
  if (node.type === 'impl_item') {
    const type = node.childForFieldName('type')?.text ?? null;
    return type;
  }
  if (node.type === 'ERROR') return null;
  if (node.type === 'type_declaration') {
    const spec = node.namedChildren.find((child) => child?.type === 'type_spec');
    return spec?.childForFieldName('name')?.text ?? null;
  }
  let named: Node | null = node.childForFieldName('name');
  // C and C++ hide the name in nested declarators: `int *(*name)(int)`.
  for (
    let declarator = node.childForFieldName('declarator');
    !named && declarator;
    declarator = declarator.childForFieldName('declarator')
  ) {
    if (NAME_TYPES.has(declarator.type)) named = declarator;
  }
  named ??= node.namedChildren.find((child) => child !== null && NAME_TYPES.has(child.type)) ?? null;
  return named ? named.text.replace(/::/g, '.').replace(/\s+/g, '') : null;
}

/** Go methods name their type in the receiver: `func (s *Store) Get()` is `Store.Get`. */
function receiverOf(node: Node): string | null {
  const receiver = node.childForFieldName('receiver');
  if (!receiver) return null;
  const type = receiver.descendantsOfType('type_identifier')[0];
  return type?.text ?? null;
}

function membersOf(node: Node, grammar: Grammar): Node[] {
  const children = node.namedChildren.filter((child): child is Node => child !== null);
  if (node.type === 'file_scoped_namespace_declaration' || node.type === 'ERROR') {
    const name = node.childForFieldName('name');
    return children.filter((child) => !(name && child.equals(name)));
  }
  const body = node.childForFieldName('body') ?? children.find((child) => BODY_TYPES.has(child.type)) ?? null;
  if (!body) return [];
  // Some grammars (Ruby) leave a comment above the first member outside the body.
  const leading = children.filter(
    (child) => grammar.isComment(child) && child.startIndex < body.startIndex && child.startPosition.row > node.startPosition.row,
  );
  return [...leading, ...body.namedChildren.filter((child): child is Node => child !== null)];
}

function segmentOf(node: Node, scope: Scope, context: Context): Segment {
  const range = { startRow: node.startPosition.row, endRow: endRowOf(node) };
  const attachable = context.grammar.isComment(node) || PREFIX_TYPES.has(node.type);
  const base = { ...range, named: false, closing: false, header: false, container: null, attachable };
  if (attachable) return { ...base, kind: scope.prefix ? 'block' : 'module', symbol: scope.prefix };
  const declaration = declarationOf(node);
  if (declaration.role === 'other') {
    const kind: ChunkKind = node.type === 'type_declaration' ? 'class' : scope.prefix ? 'block' : 'module';
    const symbol = kind === 'class' ? qualify(scope.prefix, nameOf(node)) : scope.prefix;
    return { ...base, kind, symbol, named: kind === 'class' };
  }
  const name = nameOf(declaration.node);
  if (declaration.role === 'function') {
    const receiver = receiverOf(declaration.node);
    const symbol = qualify(receiver ?? scope.prefix, name);
    const isMethod = scope.inType || receiver !== null || (scope.prefix === null && name?.includes('.') === true);
    return { ...base, kind: isMethod ? 'method' : 'function', symbol, named: true };
  }
  const kind: ChunkKind = declaration.role === 'type' ? 'class' : 'module';
  return { ...base, kind, symbol: qualify(scope.prefix, name), named: true, container: declaration.node };
}

/**
 * Segments of a run of sibling nodes: a node sharing a row with the one before joins it, comments and
 * attributes join the declaration right below them, and rows no node covers become segments of their own.
 */
function segmentsOf(nodes: Node[], scope: Scope, context: Context): Segment[] {
  const joined: Segment[] = [];
  for (const node of nodes) {
    const segment = segmentOf(node, scope, context);
    const previous = joined[joined.length - 1];
    if (previous && segment.startRow <= previous.endRow) {
      const endRow = Math.max(previous.endRow, segment.endRow);
      joined[joined.length - 1] =
        previous.attachable && !segment.attachable ? { ...segment, startRow: previous.startRow, endRow } : { ...previous, endRow };
    } else joined.push(segment);
  }
  const attached: Segment[] = [];
  for (let index = joined.length - 1; index >= 0; index -= 1) {
    const segment = joined[index];
    const below = attached[attached.length - 1];
    if (segment.attachable && below && !below.attachable && below.startRow <= segment.endRow + 1) below.startRow = segment.startRow;
    else attached.push({ ...segment });
  }
  return attached.reverse();
}

/** Segments for the rows between and around `segments` that hold code no node claimed (stray tokens, parse errors). */
function fillGaps(segments: Segment[], range: RowRange, filler: Omit<Segment, 'startRow' | 'endRow'>, lines: LineIndex): Segment[] {
  const filled: Segment[] = [];
  let next = range.startRow;
  const gap = (endRow: number) => {
    const rows = trimBlankRows(lines, { startRow: next, endRow });
    if (rows) filled.push({ ...filler, ...rows });
  };
  for (const segment of segments) {
    if (segment.startRow > next) gap(segment.startRow - 1);
    filled.push(segment);
    next = Math.max(next, segment.endRow + 1);
  }
  if (next <= range.endRow) gap(range.endRow);
  return filled;
}

function toChunk(rows: RowRange, label: { kind: ChunkKind; symbol: string | null }, context: Context): Omit<Chunk, 'path' | 'language'> {
  return {
    kind: label.kind,
    symbol: label.symbol,
    startLine: rows.startRow + 1,
    endLine: rows.endRow + 1,
    content: rowsText(context.lines, rows),
  };
}

/** The kind and symbol of merged segments: a lone declaration keeps its own, the class header names its class. */
function labelOf(group: Segment[], scope: Scope): { kind: ChunkKind; symbol: string | null } {
  const significant = group.filter((segment) => !segment.closing);
  if (significant.length === 1) return significant[0];
  const header = group.find((segment) => segment.header);
  if (header) return header;
  return scope.prefix ? { kind: 'block', symbol: scope.prefix } : { kind: 'module', symbol: null };
}

type Piece = Omit<Chunk, 'path' | 'language'>;

/** Chunks of consecutive segments: small neighbours merged within the budget, the ones too large split. */
function chunkSegments(segments: Segment[], scope: Scope, context: Context): Piece[] {
  const pieces: Piece[] = [];
  let group: Segment[] = [];
  const flush = () => {
    if (group.length === 0) return;
    pieces.push(toChunk({ startRow: group[0].startRow, endRow: group[group.length - 1].endRow }, labelOf(group, scope), context));
    group = [];
  };
  const standalone = (segment: Segment) =>
    segment.named && rowsLength(context.lines, segment.startRow, segment.endRow) >= context.smallChars;
  for (const segment of segments) {
    if (rowsLength(context.lines, segment.startRow, segment.endRow) > context.maxChars) {
      flush();
      pieces.push(...(segment.container ? splitContainer(segment, scope, context) : windows(segment, context)));
      continue;
    }
    const fits = group.length > 0 && rowsLength(context.lines, group[0].startRow, segment.endRow) <= context.maxChars;
    const mergeable = segment.closing || (!standalone(segment) && !group.some(standalone));
    if (fits && mergeable) group.push(segment);
    else {
      flush();
      group = [segment];
    }
  }
  flush();
  return pieces;
}

/** A declaration too large for one chunk and with no members to split at: windows of its lines, each keeping its kind and name. */
function windows(segment: Segment, context: Context): Piece[] {
  return lineWindows(context.lines, segment, { maxChars: context.maxChars }).map((rows) => toChunk(rows, segment, context));
}

/** A class or namespace too large for one chunk: its header, its members (a method each, or merged), its closing rows. */
function splitContainer(segment: Segment, scope: Scope, context: Context): Piece[] {
  const container = segment.container!;
  const inner: Scope = { prefix: segment.symbol, inType: roleOf(container) === 'type' };
  const members = segmentsOf(membersOf(container, context.grammar), inner, context).filter(
    (member) => member.startRow >= segment.startRow && member.endRow <= segment.endRow,
  );
  if (members.length === 0) return windows(segment, context);
  const filler = {
    kind: 'block' as const,
    symbol: inner.prefix,
    named: false,
    closing: false,
    header: false,
    container: null,
    attachable: false,
  };
  const first = members[0];
  const last = members[members.length - 1];
  const header = trimBlankRows(context.lines, { startRow: segment.startRow, endRow: first.startRow - 1 });
  if (header) members.unshift({ ...filler, ...header, kind: segment.kind, header: true });
  else first.startRow = segment.startRow;
  const closing = trimBlankRows(context.lines, { startRow: last.endRow + 1, endRow: segment.endRow });
  if (closing) members.push({ ...filler, ...closing, closing: true });
  else last.endRow = segment.endRow;
  return chunkSegments(fillGaps(members, segment, filler, context.lines), inner, context);
}

/**
 * Chunks a file its grammar can parse: top-level declarations, classes whole when they fit and split
 * into methods when they do not, small neighbours merged, long bodies cut into line windows.
 */
export async function chunkCode(input: ChunkInput, options: ChunkCodeOptions): Promise<Chunk[]> {
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  const grammar = await loadGrammar(options.grammar);
  const lines = new LineIndex(input.content);
  // A declaration under a quarter of the budget is "small": it merges with its neighbours instead of standing alone.
  const context: Context = { lines, grammar, maxChars, smallChars: Math.floor(maxChars / 4) };
  const scope: Scope = { prefix: null, inType: false };
  const pieces = grammar.withTree(
    input.content,
    (tree) => {
      const nodes = tree.rootNode.namedChildren.filter((child): child is Node => child !== null);
      const filler = {
        kind: 'module' as const,
        symbol: null,
        named: false,
        closing: false,
        header: false,
        container: null,
        attachable: false,
      };
      const segments = fillGaps(segmentsOf(nodes, scope, context), { startRow: 0, endRow: lines.lastRow }, filler, lines);
      return chunkSegments(segments, scope, context);
    },
    options.parseBudgetMs === undefined ? {} : { budgetMs: options.parseBudgetMs },
  );
  const language = GRAMMARS[options.grammar].language;
  return pieces.map((piece) => ({ path: input.path, language, ...piece }));
}
