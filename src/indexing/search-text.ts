import { identifierTerms } from '../llm/embedders/lexical.embedder';
import type { Chunk } from './chunk';

/**
 * The words full-text search sees for a chunk: identifiers split into their parts and kept whole
 * (`parseConnection` gives parse, connection and parse_connection), from its path, symbol and code.
 */
export function chunkSearchText(chunk: Pick<Chunk, 'path' | 'symbol' | 'content'>): string {
  return identifierTerms(`${chunk.path}\n${chunk.symbol ?? ''}\n${chunk.content}`).join(' ');
}

/** What the embedder is given for a chunk: where it is and what it is called help as much as its code. */
export function chunkEmbeddingText(chunk: Pick<Chunk, 'path' | 'symbol' | 'content'>): string {
  return `${chunk.path}${chunk.symbol ? ` ${chunk.symbol}` : ''}\n${chunk.content}`;
}
