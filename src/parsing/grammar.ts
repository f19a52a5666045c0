import { Parser, Query } from 'web-tree-sitter';
import type { Language, Node, Range, Tree } from 'web-tree-sitter';
import type { GrammarInfo } from './grammars';
import { counters } from './stats';

/** Options for one parse. */
export type ParseOptions = {
  /**
   * Parse only these ranges of the source, in order and not overlapping; the tree keeps the
   * source's own indices, rows and columns. Default: the whole source.
   */
  includedRanges?: Range[];
  /**
   * Give up a parse that takes longer than this (ms) and throw ParseBudgetExceeded. Tree-sitter's parse of
   * adversarial text is quadratic in some grammars (60 KB of Kotlin generics: about 14 s); default: no limit.
   */
  budgetMs?: number;
};

/** A parse was given up because it took longer than its budget (ParseOptions.budgetMs). */
export class ParseBudgetExceeded extends Error {
  constructor(grammar: string, budgetMs: number) {
    super(`tree-sitter's ${grammar} parse took longer than ${budgetMs} ms and was given up`);
    this.name = 'ParseBudgetExceeded';
  }
}

// web-tree-sitter copies at most 5,119 UTF-16 code units per read into WASM memory; a chunk must fit.
const CHUNK_LENGTH = 4_096;

const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

/**
 * A loaded grammar with its one parser. Get it from `loadGrammar`; parsing is synchronous from then on.
 * One parser per grammar is enough: a parse runs to completion before any other JavaScript does.
 */
export class Grammar {
  readonly info: GrammarInfo;
  readonly language: Language;
  private readonly parser: Parser;
  private readonly queries = new Map<string, Query>();
  private readonly commentTypes: ReadonlySet<string>;

  constructor(info: GrammarInfo, language: Language) {
    this.info = info;
    this.language = language;
    this.parser = new Parser();
    this.parser.setLanguage(language);
    this.commentTypes = new Set(info.commentTypes);
  }

  /**
   * Parses `source`, hands the tree to `use` and frees it when `use` returns, throws, or (when it
   * returns a promise) settles. Nodes of the tree must not be kept beyond `use`.
   */
  withTree<T>(source: string, use: (tree: Tree) => T, options: ParseOptions = {}): T {
    // Given a string, web-tree-sitter hands the parser `source.slice(index)` for every chunk it reads; bounded
    // chunks are cheaper, and halve the garbage-collection pauses on large files (see bench/intent.ts).
    const read = (index: number) => (index < source.length ? source.slice(index, index + CHUNK_LENGTH) : undefined);
    const deadline = options.budgetMs === undefined ? null : performance.now() + options.budgetMs;
    const tree = this.parser.parse(read, null, {
      ...(options.includedRanges ? { includedRanges: options.includedRanges } : {}),
      // Returning true cancels the parse (web-tree-sitter's d.ts types the callback as returning void).
      ...(deadline === null ? {} : { progressCallback: () => performance.now() > deadline }),
    });
    if (!tree && deadline !== null && performance.now() > deadline) {
      // A cancelled parse is kept to be resumed by the next call, which would then read another source.
      this.parser.reset();
      throw new ParseBudgetExceeded(this.info.name, options.budgetMs!);
    }
    if (!tree) throw new Error(`tree-sitter returned no tree for ${this.info.name}`);
    counters.treeParsed();
    const free = () => {
      tree.delete();
      counters.treeFreed();
    };
    let result: T;
    try {
      result = use(tree);
    } catch (error) {
      free();
      throw error;
    }
    if (isPromiseLike(result)) return Promise.resolve(result).finally(free) as T;
    free();
    return result;
  }

  /** A compiled query, cached for the life of the process (queries are small and reused on every parse). */
  query(source: string): Query {
    let query = this.queries.get(source);
    if (!query) {
      query = new Query(this.language, source);
      this.queries.set(source, query);
    }
    return query;
  }

  /** A query capturing every comment node as `@comment`. */
  get commentQuery(): Query {
    return this.query(this.info.commentTypes.map((type) => `(${type}) @comment`).join('\n'));
  }

  /** Whether a node is a comment in this grammar (see GrammarInfo.commentTypes). */
  isComment(node: Node): boolean {
    return this.commentTypes.has(node.type);
  }

  /** Comment nodes that overlap rows `startRow` to `endRow` (inclusive), in document order. */
  commentsInRows(node: Node, startRow: number, endRow: number): Node[] {
    return capturesInRows(this.commentQuery, node, startRow, endRow).map((capture) => capture.node);
  }
}

/** A query's captures under `node` that overlap rows `startRow` to `endRow` (inclusive); tree-sitter skips the rest of the tree. */
export function capturesInRows(query: Query, node: Node, startRow: number, endRow: number) {
  return query.captures(node, { startPosition: { row: Math.max(0, startRow), column: 0 }, endPosition: { row: endRow + 1, column: 0 } });
}
