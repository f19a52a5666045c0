import { identifierTerms } from '../llm/embedders/terms';
import type { Chunk } from './chunk';

/**
 * Each distinct term once, plus once more each time its count doubles (1, 2, 4, 8 occurrences give
 * 1, 2, 3, 4 copies). Full-text ranking counts every occurrence of a query word and knows nothing of
 * how common the word is, so a long chunk repeating "connection" forty times would otherwise beat a
 * short one holding the rare words of the question.
 */
function sublinear(terms: readonly string[]): string[] {
  const kept: string[] = [];
  for (const [term, count] of termCounts(terms)) {
    for (let copy = 0; copy < copiesOf(count); copy += 1) kept.push(term);
  }
  return kept;
}

/** Each distinct term with its count, in the order the terms first occur. */
function termCounts(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

const copiesOf = (count: number) => 1 + Math.floor(Math.log2(count));

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

// PostgreSQL's limits on a tsvector (tsearch/ts_type.h): a lexeme is shorter than 2,048 bytes,
// positions stop at 16,383, and a lexeme keeps at most 255 of them.
const MAX_LEXEME_BYTES = 2_047;
const MAX_POSITION = 16_383;
const MAX_POSITIONS = 255;
// PostgreSQL's default parser reads `1e5x` as the number 1e5 and then the word x.
const EXPONENT_THEN_LETTER = /^\d+e\d+(?=[a-z])/;

/**
 * The full-text document PostgreSQL's to_tsvector('simple', text) makes of a searchTextOfTerms
 * text: each lexeme with its positions, ascending (in the order the lexemes first occur). Such a
 * text is lower-case words of [a-z0-9_] separated by spaces, where the default parser sees only
 * words split at `_`, numbers, and numbers in scientific notation; the simple configuration keeps
 * every word as it is, numbered from 1 in order. The indexer sends it in tsvector's binary form
 * (src/db/pg-binary.ts), so the database neither parses the text nor reads a tsvector's text.
 */
export function searchDocumentOf(text: string): Map<string, number[]> {
  const document = documentBuilder();
  for (const word of text.split(/[ _]+/)) document.add(word);
  return document.positions;
}

/**
 * searchDocumentOf(searchTextOfTerms(terms)), without making the text and splitting it again: the
 * same words in the same order (each distinct term's copies together, a term split at `_`).
 */
export function searchDocumentOfTerms(terms: readonly string[]): Map<string, number[]> {
  const document = documentBuilder();
  for (const [term, count] of termCounts(terms)) {
    const words = term.includes('_') || term.includes(' ') ? term.split(/[ _]+/) : [term];
    for (let copy = 0; copy < copiesOf(count); copy += 1) for (const word of words) document.add(word);
  }
  return document.positions;
}

/** Numbers the lexemes of the words it is given as PostgreSQL's default parser and simple configuration do. */
function documentBuilder() {
  const positions = new Map<string, number[]>();
  let position = 0;
  const addLexeme = (lexeme: string) => {
    if (lexeme.length > MAX_LEXEME_BYTES) return;
    position += 1;
    const at = Math.min(position, MAX_POSITION);
    const list = positions.get(lexeme);
    if (!list) positions.set(lexeme, [at]);
    else if (list.length < MAX_POSITIONS && list[list.length - 1] !== at) list.push(at);
  };
  const add = (word: string) => {
    let rest = word;
    // Only a word starting with a digit can start with a number in scientific notation.
    const first = rest.charCodeAt(0);
    if (first >= 48 && first <= 57) {
      for (let match = EXPONENT_THEN_LETTER.exec(rest); match; match = EXPONENT_THEN_LETTER.exec(rest)) {
        addLexeme(match[0]);
        rest = rest.slice(match[0].length);
      }
    }
    if (rest) addLexeme(rest);
  };
  return { positions, add };
}

/** searchDocumentOf in tsvector's text form (`'parse':1,4 'connection':2`). */
export function tsvectorOfSearchText(text: string): string {
  let document = '';
  for (const [lexeme, list] of searchDocumentOf(text)) document += `${document ? ' ' : ''}'${lexeme}':${list.join(',')}`;
  return document;
}
