import { normalize, type Embedder } from './embedder';
import { identifierTerms, stemWord, STOP_WORDS } from './terms';

export { identifierTerms } from './terms';

// FNV-1a: fast, stable across runs and machines, good enough to spread terms over buckets.
function hash(text: string): number {
  return hashOn(0x811c9dc5, text);
}

/** FNV-1a of `text` continued from another text's hash: hashOn(hash(a), b) is hash(a + b). */
function hashOn(start: number, text: string): number {
  let value = start;
  for (let index = 0; index < text.length; index += 1) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 0x01000193);
  }
  return value >>> 0;
}

// The first version's few stop words; version 2 shares the full-text index's list and stems.
const V1_STOP_WORDS = new Set([
  'the',
  'is',
  'of',
  'to',
  'in',
  'and',
  'or',
  'it',
  'this',
  'that',
  'what',
  'how',
  'does',
  'do',
  'an',
  'be',
  'on',
  'for',
  'with',
  'where',
  'which',
]);

export type LexicalEmbedderOptions = {
  /** Default 512. */
  dimensions?: number;
  /**
   * 2 (default): the full-text index's stop words, and words reduced to their stem (packets and
   * packet weigh the same). 1: the first version, kept to embed questions for indexes made with it.
   */
  algorithm?: 1 | 2;
};

/**
 * The default embedder, needing no model: identifier-aware terms and their neighbouring pairs,
 * sublinear term frequency, hashed with a sign bit into a fixed number of dimensions, then
 * L2-normalised. Deterministic, so it works offline and in tests; semantic only as far as shared
 * words and identifiers go.
 */
export class LexicalEmbedder implements Embedder {
  readonly name = 'lexical';
  readonly dimensions: number;
  readonly version: string;
  readonly algorithm: 1 | 2;

  constructor(options: LexicalEmbedderOptions = {}) {
    this.dimensions = options.dimensions ?? 512;
    this.algorithm = options.algorithm ?? 2;
    this.version = `lexical-v${this.algorithm}-${this.dimensions}`;
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    const words = new Map<string, readonly string[]>();
    const stems = new Map<string, string>();
    return texts.map((text) => this.embedTerms(identifierTerms(text, words), stems));
  }

  /**
   * The vector of a text from its identifierTerms: what embed gives for the text. The indexer has
   * the terms already (the full-text document is made of the same ones), so it splits each chunk once.
   * `stems` keeps each term's stem for the next chunks of the same job.
   */
  embedTerms(allTerms: readonly string[], stems?: Map<string, string>): number[] {
    const stem = (term: string) => {
      let stemmed = stems?.get(term);
      if (stemmed === undefined) {
        stemmed = stemWord(term);
        stems?.set(term, stemmed);
      }
      return stemmed;
    };
    const terms =
      this.algorithm === 1
        ? allTerms.filter((term) => !V1_STOP_WORDS.has(term))
        : allTerms.filter((term) => !STOP_WORDS.has(term)).map(stem);
    // The features are each term and each pair of neighbouring terms (`${previous} ${term}`),
    // counted in the order they first occur. The distinct terms are numbered, so a feature is a
    // number (a term's, or `distinct + previous * distinct + term` for a pair) rather than a string.
    const numbers = new Map<string, number>();
    const distinct: string[] = [];
    const sequence = terms.map((term) => {
      let number = numbers.get(term);
      if (number === undefined) {
        numbers.set(term, (number = distinct.length));
        distinct.push(term);
      }
      return number;
    });
    const size = distinct.length;
    const counts = new Map<number, number>();
    for (let index = 0; index < sequence.length; index += 1) {
      const term = sequence[index];
      counts.set(term, (counts.get(term) ?? 0) + 1);
      if (index > 0) {
        const pair = size + sequence[index - 1] * size + term;
        counts.set(pair, (counts.get(pair) ?? 0) + 1);
      }
    }
    const hashes = distinct.map(hash);
    const vector = new Array<number>(this.dimensions).fill(0);
    // Each feature's hash is the hash of its text (a pair's: the first term's, then ' ' and the second).
    for (const [feature, count] of counts) {
      const pair = feature >= size;
      const first = pair ? Math.floor((feature - size) / size) : feature;
      const bucket = pair ? hashOn(hashOn(hashes[first], ' '), distinct[feature - size - first * size]) : hashes[feature];
      const sign = bucket & 0x80000000 ? -1 : 1;
      vector[bucket % this.dimensions] += sign * (1 + Math.log(count)) * (pair ? 0.5 : 1);
    }
    return normalize(vector);
  }
}
