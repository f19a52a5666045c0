import { readFile } from 'node:fs/promises';
import { Language } from 'web-tree-sitter';
import type { Tree } from 'web-tree-sitter';
import { Grammar } from './grammar';
import type { ParseOptions } from './grammar';
import { GRAMMARS } from './grammars';
import type { GrammarName } from './grammars';
import { initTreeSitter, packageFilePath } from './runtime';
import { counters } from './stats';

const loading = new Map<GrammarName, Promise<Grammar>>();

/**
 * The grammar, loaded on first use from its package's .wasm bytes and shared afterwards: every
 * caller, concurrent or later, gets the same Grammar (and so the same parser). A failed load is
 * forgotten, so the next call tries again.
 */
export function loadGrammar(name: GrammarName): Promise<Grammar> {
  let grammar = loading.get(name);
  if (!grammar) {
    grammar = (async () => {
      await initTreeSitter();
      const info = GRAMMARS[name];
      const language = await Language.load(await readFile(packageFilePath(info.packageName, info.wasmFile)));
      counters.grammarLoaded(name);
      return new Grammar(info, language);
    })();
    loading.set(name, grammar);
    grammar.catch(() => loading.delete(name));
  }
  return grammar;
}

/** Loads the grammar if needed, then parses `source` and frees the tree once `use` is done (see Grammar.withTree). */
export async function withTree<T>(
  name: GrammarName,
  source: string,
  use: (tree: Tree) => T | Promise<T>,
  options?: ParseOptions,
): Promise<T> {
  const grammar = await loadGrammar(name);
  return grammar.withTree(source, use, options);
}
