import { languageOf } from '../parsing/languages';
import { grammarForFileName, ParseBudgetExceeded } from '../parsing';
import { CHUNKER_VERSION } from './chunk';
import type { Chunk, ChunkInput, ChunkOptions } from './chunk';
import { chunkCode } from './chunk-code';
import { chunkLines } from './chunk-lines';

export { CHUNKER_VERSION, chunkId } from './chunk';
export type { Chunk, ChunkIdOptions, ChunkInput, ChunkKind, ChunkOptions } from './chunk';

/**
 * How files are cut: along their syntax (the default), in fixed-size line windows whatever the
 * language, or not at all (one chunk per file). The last two exist to compare against (eval:retrieval).
 */
export type ChunkStrategy = 'tree-sitter' | 'lines' | 'whole-file';
export const CHUNK_STRATEGIES: readonly ChunkStrategy[] = ['tree-sitter', 'lines', 'whole-file'];

/** The chunker's version for a strategy: part of the index's identity, so a change rebuilds it. */
export function chunkerVersionOf(strategy: ChunkStrategy = 'tree-sitter'): string {
  return strategy === 'tree-sitter' ? CHUNKER_VERSION : `${CHUNKER_VERSION}+${strategy}`;
}

/** Chunks one file with a strategy; see chunkFile for the default. */
export async function chunkFileWith(strategy: ChunkStrategy, input: ChunkInput, options: ChunkOptions = {}): Promise<Chunk[]> {
  if (strategy === 'lines') return chunkLines(input, options);
  if (strategy === 'whole-file') {
    const lines = input.content.replace(/\n$/, '').split('\n');
    if (!input.content.trim()) return [];
    return [
      {
        path: input.path,
        language: languageOf(input.path),
        kind: 'module',
        symbol: null,
        startLine: 1,
        endLine: lines.length,
        content: lines.join('\n'),
      },
    ];
  }
  return chunkFile(input, options);
}

/**
 * How long a file's parse may take before it is chunked by lines instead. Parsing takes about 0.25 ms per KB (a
 * 1 MB file, the largest indexed by default, about 0.25 s); adversarial text can take some grammars far longer
 * (60 KB of Kotlin generics: about 14 s, growing with the square of the size), which held an index run for hours.
 */
export const PARSE_BUDGET_MS = 3_000;

/**
 * Chunks one file: by declarations when duo-slice has a tree-sitter grammar for it (src/parsing), by
 * overlapping line windows otherwise, or when its parse outruns PARSE_BUDGET_MS. Deterministic: the same input and
 * options give the same chunks, but for a file whose parse takes about PARSE_BUDGET_MS.
 */
export async function chunkFile(input: ChunkInput, options: ChunkOptions = {}): Promise<Chunk[]> {
  const grammar = grammarForFileName(input.path);
  if (grammar === null) return chunkLines(input, options);
  try {
    return await chunkCode(input, { grammar, maxChars: options.maxChars, parseBudgetMs: options.parseBudgetMs ?? PARSE_BUDGET_MS });
  } catch (error) {
    if (!(error instanceof ParseBudgetExceeded)) throw error;
    return chunkLines(input, options);
  }
}
