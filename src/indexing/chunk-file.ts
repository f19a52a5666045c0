import { languageOf } from '../parsing/languages';
import { grammarForFileName } from '../parsing';
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
 * Chunks one file: by declarations when duo-slice has a tree-sitter grammar for it (src/parsing), by
 * overlapping line windows otherwise. Deterministic: the same input and options give the same chunks.
 */
export async function chunkFile(input: ChunkInput, options: ChunkOptions = {}): Promise<Chunk[]> {
  const grammar = grammarForFileName(input.path);
  if (grammar === null) return chunkLines(input, options);
  return chunkCode(input, { grammar, maxChars: options.maxChars });
}
