// The parsing module's public face: the one owner of tree-sitter, shared by suggestions and indexing.
export { GRAMMARS, grammarForFileName } from './grammars';
export type { GrammarInfo, GrammarName } from './grammars';
export { Grammar, ParseBudgetExceeded, capturesInRows } from './grammar';
export type { ParseOptions } from './grammar';
export { loadGrammar, withTree } from './load-grammar';
export { LineIndex } from './line-index';
export { parsingStats } from './stats';
export type { ParsingStats } from './stats';
export type { Node, Point, Query, Range, Tree } from 'web-tree-sitter';
