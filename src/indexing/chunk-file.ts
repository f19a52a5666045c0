import { grammarForFileName } from '../parsing';
import type { Chunk, ChunkInput, ChunkOptions } from './chunk';
import { chunkCode } from './chunk-code';
import { chunkLines } from './chunk-lines';

export { CHUNKER_VERSION, chunkId } from './chunk';
export type { Chunk, ChunkIdOptions, ChunkInput, ChunkKind, ChunkOptions } from './chunk';

/**
 * Chunks one file: by declarations when duo-slice has a tree-sitter grammar for it (src/parsing), by
 * overlapping line windows otherwise. Deterministic: the same input and options give the same chunks.
 */
export async function chunkFile(input: ChunkInput, options: ChunkOptions = {}): Promise<Chunk[]> {
  const grammar = grammarForFileName(input.path);
  if (grammar === null) return chunkLines(input, options);
  return chunkCode(input, { grammar, maxChars: options.maxChars });
}
