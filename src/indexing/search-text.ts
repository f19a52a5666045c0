import { identifierTerms } from '../llm/embedders/terms';
import type { Chunk } from './chunk';

/**
 * Each distinct term once, plus once more each time its count doubles (1, 2, 4, 8 occurrences give
 * 1, 2, 3, 4 copies). Full-text ranking counts every occurrence of a query word and knows nothing of
 * how common the word is, so a long chunk repeating "connection" forty times would otherwise beat a
 * short one holding the rare words of the question.
 */
function sublinear(terms: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  const kept: string[] = [];
  for (const [term, count] of counts) {
    for (let copy = 0; copy < 1 + Math.floor(Math.log2(count)); copy += 1) kept.push(term);
  }
  return kept;
}

/**
 * The words full-text search sees for a chunk: identifiers split into their parts and kept whole
 * (`parseConnection` gives parse, connection and parse_connection), from its path, symbol and code,
 * with repeated words damped (see sublinear).
 */
export function chunkSearchText(chunk: Pick<Chunk, 'path' | 'symbol' | 'content'>): string {
  return searchTextOfTerms(identifierTerms(`${chunk.path}\n${chunk.symbol ?? ''}\n${chunk.content}`));
}

/**
 * The full-text document from a chunk's identifierTerms. The terms of chunkEmbeddingText are the
 * same as chunkSearchText's (only the separators between path, symbol and code differ, and no
 * term spans them), so the indexer splits each chunk once for both.
 */
export function searchTextOfTerms(terms: readonly string[]): string {
  return sublinear(terms).join(' ');
}

/** What the embedder is given for a chunk: where it is and what it is called help as much as its code. */
export function chunkEmbeddingText(chunk: Pick<Chunk, 'path' | 'symbol' | 'content'>): string {
  return `${chunk.path}${chunk.symbol ? ` ${chunk.symbol}` : ''}\n${chunk.content}`;
}
