import { loadGrammar, type GrammarName, type Node, type Tree } from '../../parsing';
import { questionFromComment } from './clean-comment';

/**
 * Doc comments and docstrings of one source file, each with the question it makes
 * (clean-comment.ts), the lines it takes (to blank them out of the corpus copy) and the identifiers
 * of what it documents (for the vocabulary associations). A comment counts when it starts and ends
 * its lines and sits right above a declaration (a function, method, class, type, constant, field,
 * exported or assigned function), or opens the file (a module comment, Rust's `//!`); a docstring
 * is the first statement of a Python function, class or module.
 */
export type MinedComment = {
  question: string;
  /** 0-based first and last line of the comment or docstring. */
  startRow: number;
  endRow: number;
  /** What the first line is replaced with when the comment is taken out ('' = a blank line). */
  placeholder: string;
  kind: 'declaration' | 'module' | 'docstring';
  /** The documented declaration's name, when it has one. */
  symbol: string | null;
  /** Identifiers in the documented declaration (at most its first MAX_IDENTIFIER_ROWS lines), each once. */
  identifiers: string[];
};

/** How many lines of a documented declaration its identifiers are read from. */
export const MAX_IDENTIFIER_ROWS = 200;

const DOCUMENTED = new RegExp(
  [
    'function|method|class|struct|enum|interface|trait|impl|module|mod_item|declaration|definition',
    'type_item|const_item|static_item|macro|export_statement|constructor|singleton|decorated|^pair$',
    'field|property|union|type_spec|alias|assignment|preproc_def|preproc_function_def|^package_clause$',
  ].join('|'),
);
const WRAPPERS = /^(attribute_item|decorator|annotation|marker_annotation|inner_attribute_item)$/;
const IDENTIFIER_TYPES = [
  'identifier',
  'property_identifier',
  'shorthand_property_identifier',
  'type_identifier',
  'field_identifier',
  'package_identifier',
  'constant',
  'instance_variable',
  'simple_symbol',
  'statement_identifier',
  'private_property_identifier',
];

const PYTHON_DOCSTRINGS = `
(module . (expression_statement (string) @doc))
(function_definition body: (block . (expression_statement (string) @doc)))
(class_definition body: (block . (expression_statement (string) @doc)))`;

// A comment above a statement in a function's body explains a step, not what the file offers.
const FUNCTION_BODY = new Set([
  'function_definition',
  'function_declaration',
  'function_item',
  'function_expression',
  'function',
  'arrow_function',
  'generator_function',
  'generator_function_declaration',
  'method_definition',
  'method_declaration',
  'constructor_declaration',
  'method',
  'singleton_method',
  'closure_expression',
  'func_literal',
  'lambda',
  'do_block',
  'block_node',
]);

function insideFunction(node: Node): boolean {
  for (let parent = node.parent; parent; parent = parent.parent) if (FUNCTION_BODY.has(parent.type)) return true;
  return false;
}

function isDocumented(node: Node): boolean {
  if (insideFunction(node)) return false;
  if (DOCUMENTED.test(node.type)) return true;
  if (node.type !== 'expression_statement') return false;
  const firstLine = node.text.slice(0, 200).split('\n')[0];
  return /function\b|=>|=\s*class\b|\.prototype\./.test(firstLine);
}

/** The name a declaration gives: its `name` field, or that of what it wraps or declares first. */
function symbolOf(node: Node): string | null {
  const named = node.childForFieldName('name');
  if (named) return named.text;
  for (const field of ['declaration', 'definition', 'declarator', 'left', 'type']) {
    const inner = node.childForFieldName(field);
    if (inner && inner.id !== node.id) {
      const symbol = inner.type.endsWith('identifier') ? inner.text : symbolOf(inner);
      if (symbol) return symbol;
    }
  }
  const first = node.namedChildren.find((child) => child && /declarator|spec|definition|declaration/.test(child.type));
  if (first) return symbolOf(first);
  if (node.type === 'expression_statement') {
    const left = node.namedChildren[0]?.childForFieldName('left');
    const property = left?.childForFieldName('property') ?? left;
    if (property?.type.endsWith('identifier')) return property.text;
  }
  return null;
}

function identifiersOf(node: Node, fromRow: number): string[] {
  const seen = new Set<string>();
  const endRow = Math.min(node.endPosition.row, fromRow + MAX_IDENTIFIER_ROWS);
  for (const identifier of node.descendantsOfType(IDENTIFIER_TYPES, { row: fromRow, column: 0 }, { row: endRow + 1, column: 0 })) {
    if (identifier) seen.add(identifier.text.replace(/^[@:$]+/, ''));
  }
  seen.delete('');
  return [...seen];
}

/** The comments and docstrings of `source`, parsed with `grammar`, that make a question. */
export async function mineComments(options: { source: string; grammar: GrammarName }): Promise<MinedComment[]> {
  const { source } = options;
  const grammar = await loadGrammar(options.grammar);
  const lines = source.split('\n');
  const startsLine = (node: Node) => !lines[node.startPosition.row].slice(0, node.startPosition.column).trim();
  // Some grammars (Rust's) end a line comment after its newline: at column 0 of the next row.
  const lastRow = (node: Node) =>
    node.endPosition.column === 0 && node.endPosition.row > node.startPosition.row ? node.endPosition.row - 1 : node.endPosition.row;
  const endsLine = (node: Node) =>
    lastRow(node) !== node.endPosition.row || !(lines[node.endPosition.row] ?? '').slice(node.endPosition.column).trim();

  return grammar.withTree(
    source,
    (tree: Tree) => {
      const mined: MinedComment[] = [];
      const add = (entry: Omit<MinedComment, 'question'> & { text: string }) => {
        const question = questionFromComment(entry.text, entry.symbol ?? undefined);
        if (!question) return;
        const { text: _text, ...rest } = entry;
        mined.push({ question, ...rest });
      };

      if (options.grammar === 'python') {
        for (const { node } of grammar.query(PYTHON_DOCSTRINGS).captures(tree.rootNode)) {
          const statement = node.parent!;
          if (!startsLine(statement) || !endsLine(statement)) continue;
          const owner = statement.parent?.type === 'block' ? statement.parent.parent! : tree.rootNode;
          // Nodes are new objects at every access: compared by id.
          const isModule = owner.id === tree.rootNode.id;
          const indent = /^\s*/.exec(lines[statement.startPosition.row])![0];
          add({
            text: node.text,
            startRow: statement.startPosition.row,
            endRow: statement.endPosition.row,
            placeholder: `${indent}""`,
            kind: isModule ? 'module' : 'docstring',
            symbol: isModule ? null : symbolOf(owner),
            identifiers: identifiersOf(owner, isModule ? 0 : owner.startPosition.row),
          });
        }
      }

      const comments = grammar.commentQuery
        .captures(tree.rootNode)
        .map((capture) => capture.node)
        .sort((left, right) => left.startIndex - right.startIndex);
      let index = 0;
      while (index < comments.length) {
        const group = [comments[index]];
        index += 1;
        if (!startsLine(group[0])) continue;
        while (
          index < comments.length &&
          comments[index].startPosition.row === lastRow(group[group.length - 1]) + 1 &&
          startsLine(comments[index])
        ) {
          group.push(comments[index]);
          index += 1;
        }
        const last = group[group.length - 1];
        if (!endsLine(last)) continue;
        const text = group.map((node) => node.text).join('\n');
        const startRow = group[0].startPosition.row;
        const endRow = lastRow(last);
        let next = last.nextNamedSibling;
        while (next && (grammar.isComment(next) || WRAPPERS.test(next.type))) next = next.nextNamedSibling;
        const innerDoc = /^\s*(\/\/!|\/\*!)/.test(text);
        if (!innerDoc && next && next.startPosition.row <= endRow + 2 && isDocumented(next)) {
          add({
            text,
            startRow,
            endRow,
            placeholder: '',
            kind: 'declaration',
            symbol: symbolOf(next),
            identifiers: identifiersOf(next, next.startPosition.row),
          });
          continue;
        }
        const firstNamed = tree.rootNode.namedChildren[0];
        if (innerDoc || (startRow <= 3 && firstNamed?.id === group[0].id))
          add({ text, startRow, endRow, placeholder: '', kind: 'module', symbol: null, identifiers: identifiersOf(tree.rootNode, 0) });
      }
      return mined.sort((left, right) => left.startRow - right.startRow);
    },
    { budgetMs: 10_000 },
  );
}
