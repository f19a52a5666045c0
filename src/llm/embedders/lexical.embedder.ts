import type { Embedder } from './embedder';
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
    this.scratch = new Float64Array(this.dimensions);
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
    const { values, scale } = this.termVector(allTerms, stems);
    return Array.from(values, (value) => value * scale);
  }

  /**
   * embedTerms before its last step: the unnormalised vector and the factor that normalises it, so
   * that `values[i] * scale` is embedTerms' i-th number exactly. `values` is this embedder's own
   * buffer, overwritten by its next call: read it before calling again (the indexer writes it
   * straight into the binary form the database reads, src/indexing/chunk-embed.ts).
   */
  termVector(allTerms: readonly string[], stems?: Map<string, string>): { values: Float64Array; scale: number } {
    const stopWords = this.algorithm === 1 ? V1_STOP_WORDS : STOP_WORDS;
    const stem = (term: string) => {
      if (this.algorithm === 1) return term;
      let stemmed = stems?.get(term);
      if (stemmed === undefined) {
        stemmed = stemWord(term);
        stems?.set(term, stemmed);
      }
      return stemmed;
    };
    // The features are each term and each pair of neighbouring terms (`${previous} ${term}`),
    // counted in the order they first occur. The distinct terms are numbered; a pair is known by
    // its two numbers. Each feature adds to its bucket in that order (the additions' order fixes
    // the last bits of a sum), so the vector is the same, bit for bit, as when features were strings.
    const numbers = new Map<string, number>();
    const distinct: string[] = [];
    const termCounts: number[] = [];
    const pairs = new Map<number, number>();
    const pairFirst: number[] = [];
    const pairSecond: number[] = [];
    const pairCounts: number[] = [];
    // Features in first-occurrence order: a term's number, or -1 - (its index) for a pair.
    const order: number[] = [];
    let previous = -1;
    for (let index = 0; index < allTerms.length; index += 1) {
      if (stopWords.has(allTerms[index])) continue;
      const term = stem(allTerms[index]);
      let number = numbers.get(term);
      if (number === undefined) {
        numbers.set(term, (number = distinct.length));
        if (number >= PAIR_KEY_BASE) throw new Error(`lexical embedder: more than ${PAIR_KEY_BASE} distinct terms in one text`);
        distinct.push(term);
        termCounts.push(1);
        order.push(number);
      } else termCounts[number] += 1;
      if (previous >= 0) {
        const key = previous * PAIR_KEY_BASE + number;
        const pair = pairs.get(key);
        if (pair === undefined) {
          pairs.set(key, pairCounts.length);
          order.push(-1 - pairCounts.length);
          pairFirst.push(previous);
          pairSecond.push(number);
          pairCounts.push(1);
        } else pairCounts[pair] += 1;
      }
      previous = number;
    }
    // Each feature's hash is the hash of its text (a pair's: the first term's, then ' ' and the second).
    const hashes = distinct.map(hash);
    const values = this.scratch;
    values.fill(0);
    for (const feature of order) {
      let bucket: number;
      let weight: number;
      if (feature >= 0) {
        bucket = hashes[feature];
        weight = 1 + Math.log(termCounts[feature]);
      } else {
        const pair = -1 - feature;
        bucket = hashOn(hashOn(hashes[pairFirst[pair]], ' '), distinct[pairSecond[pair]]);
        weight = (1 + Math.log(pairCounts[pair])) * 0.5;
      }
      values[bucket % this.dimensions] += (bucket & 0x80000000 ? -1 : 1) * weight;
    }
    let norm = 0;
    for (let index = 0; index < values.length; index += 1) norm += values[index] * values[index];
    return { values, scale: norm === 0 ? 1 : 1 / Math.sqrt(norm) };
  }

  private readonly scratch: Float64Array;
}

/** Pairs of term numbers are keyed `first * PAIR_KEY_BASE + second`: exact while both are below it (2^21). */
const PAIR_KEY_BASE = 2 ** 21;
