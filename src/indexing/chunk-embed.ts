import { LexicalEmbedder, type LexicalEmbedderOptions } from '../llm/embedders/lexical.embedder';
import type { Embedder } from '../llm/embedders/embedder';
import { chunkFileWith, chunkId, type Chunk, type ChunkStrategy } from './chunk-file';
import { identifierTerms } from '../llm/embedders/terms';
import { chunkEmbeddingText, searchDocumentOfTerms } from './search-text';
import { tsvectorBinary, vectorBinary } from '../db/pg-binary';

/** One file to cut: its path (for the grammar and the chunks' metadata) and its text. */
export type FileToChunk = { path: string; content: string };

/**
 * A chunk as the index stores it: the chunker's chunk (every field it carries passes through
 * unchanged), its id, its full-text document and, when the embedder could run beside the chunker,
 * its vector (null otherwise: the caller embeds what it does not have yet). Both in the binary form
 * PostgreSQL reads them in (src/db/pg-binary.ts: the database parses neither, and this process never
 * prints 512 numbers per chunk); bytes also cross from a worker thread as one copy, where an array of
 * 512 numbers is cloned number by number and made again as garbage on the main thread.
 */
export type EmbeddedChunk = Chunk & { id: string; searchDocument: Uint8Array; vector: Uint8Array | null };

/** How a batch of files is cut and embedded; plain data, so it crosses to a worker thread as it is. */
export type ChunkEmbedSpec = {
  strategy: ChunkStrategy;
  /** The embedder's version: part of every chunk id. */
  embedderVersion: string;
  /** Set when the embedder is the lexical one (it needs no model): vectors are made beside the chunks. */
  lexical: Required<LexicalEmbedderOptions> | null;
};

/** The spec for an embedder: lexical vectors are made where the chunks are, any other embedder's by the caller. */
export function chunkEmbedSpec(embedder: Embedder, strategy: ChunkStrategy = 'tree-sitter'): ChunkEmbedSpec {
  const lexical = embedder instanceof LexicalEmbedder ? { algorithm: embedder.algorithm, dimensions: embedder.dimensions } : null;
  return { strategy, embedderVersion: embedder.version, lexical };
}

const lexicalEmbedders = new Map<string, LexicalEmbedder>();

function lexicalFor(options: Required<LexicalEmbedderOptions>): LexicalEmbedder {
  const key = `${options.algorithm}-${options.dimensions}`;
  let embedder = lexicalEmbedders.get(key);
  if (!embedder) lexicalEmbedders.set(key, (embedder = new LexicalEmbedder(options)));
  return embedder;
}

/**
 * Chunks files and, with the lexical embedder, embeds their chunks: the CPU-bound part of indexing,
 * the one thing a worker thread does (chunk-pool.ts). One entry per file, in order.
 */
export async function chunkAndEmbed(files: readonly FileToChunk[], spec: ChunkEmbedSpec): Promise<EmbeddedChunk[][]> {
  const embedder = spec.lexical ? lexicalFor(spec.lexical) : null;
  const result: EmbeddedChunk[][] = [];
  // Each word's terms and each term's stem, for the rest of this job (its files repeat their words).
  const words = new Map<string, readonly string[]>();
  const stems = new Map<string, string>();
  for (const file of files) {
    const chunks = await chunkFileWith(spec.strategy, file);
    result.push(
      chunks.map((chunk) => {
        // One split into terms serves both the full-text document and the lexical vector (search-text.ts).
        const terms = identifierTerms(chunkEmbeddingText(chunk), words);
        const vector = embedder?.termVector(terms, stems);
        return {
          ...chunk,
          id: chunkId(chunk, { embedderVersion: spec.embedderVersion }),
          searchDocument: tsvectorBinary(searchDocumentOfTerms(terms)),
          vector: vector ? vectorBinary(vector.values, vector.scale) : null,
        };
      }),
    );
  }
  return result;
}
