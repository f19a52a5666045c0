import type { GrammarName } from './grammars';
import { runtimeInitCount, wasmHeapBytes } from './runtime';

const grammarLoads = new Map<GrammarName, number>();
let liveTrees = 0;
let treesParsed = 0;

/** Counts kept as things happen, so tests and benchmarks can observe loading and freeing without reaching inside. */
export const counters = {
  grammarLoaded(name: GrammarName): void {
    grammarLoads.set(name, (grammarLoads.get(name) ?? 0) + 1);
  },
  treeParsed(): void {
    liveTrees += 1;
    treesParsed += 1;
  },
  treeFreed(): void {
    liveTrees -= 1;
  },
};

/** A snapshot of what the parsing module has done in this process. */
export type ParsingStats = {
  /** web-tree-sitter initialisations: 1 after the first parse, and never more. */
  runtimeInits: number;
  /** .wasm loads per grammar: 1 for each grammar used, and never more. */
  grammarLoads: Partial<Record<GrammarName, number>>;
  /** Trees parsed and not yet freed: 0 whenever no caller is inside withTree. */
  liveTrees: number;
  /** Trees parsed since start. */
  treesParsed: number;
  /** Size of web-tree-sitter's WASM memory; it grows when trees leak and never shrinks. */
  wasmHeapBytes: number;
};

/** What the parsing module has done so far in this process (cheap: counters and one size). */
export function parsingStats(): ParsingStats {
  return {
    runtimeInits: runtimeInitCount(),
    grammarLoads: Object.fromEntries(grammarLoads),
    liveTrees,
    treesParsed,
    wasmHeapBytes: wasmHeapBytes(),
  };
}
