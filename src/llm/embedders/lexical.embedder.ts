import { normalize, type Embedder } from './embedder';

/** Identifier pieces: `parseConnection`, `parse_connection` and `parse-connection` all give parse + connection. */
export function identifierTerms(text: string): string[] {
  const terms: string[] = [];
  for (const word of text.match(/[A-Za-z_$][A-Za-z0-9_$]*|\d+/g) ?? []) {
    const parts = word
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
      .split(/[\s_$]+/)
      .map((part) => part.toLowerCase())
      .filter((part) => part.length > 1);
    terms.push(...parts);
    // The whole identifier too, so an exact symbol name weighs more than its pieces.
    if (parts.length > 1) terms.push(parts.join('_'));
  }
  return terms;
}

// FNV-1a: fast, stable across runs and machines, good enough to spread terms over buckets.
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 0x01000193);
  }
  return value >>> 0;
}

const STOP_WORDS = new Set(['the', 'is', 'of', 'to', 'in', 'and', 'or', 'it', 'this', 'that', 'what', 'how', 'does', 'do', 'an', 'be', 'on', 'for', 'with', 'where', 'which']);

export type LexicalEmbedderOptions = {
  /** Default 512. */
  dimensions?: number;
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

  constructor(options: LexicalEmbedderOptions = {}) {
    this.dimensions = options.dimensions ?? 512;
    this.version = `lexical-v1-${this.dimensions}`;
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    return texts.map((text) => this.embedOne(text));
  }

  private embedOne(text: string): number[] {
    const terms = identifierTerms(text).filter((term) => !STOP_WORDS.has(term));
    const counts = new Map<string, number>();
    const add = (feature: string) => counts.set(feature, (counts.get(feature) ?? 0) + 1);
    terms.forEach((term, index) => {
      add(term);
      if (index > 0) add(`${terms[index - 1]} ${term}`);
    });
    const vector = new Array<number>(this.dimensions).fill(0);
    for (const [feature, count] of counts) {
      const bucket = hash(feature);
      const sign = bucket & 0x80000000 ? -1 : 1;
      vector[bucket % this.dimensions]! += sign * (1 + Math.log(count)) * (feature.includes(' ') ? 0.5 : 1);
    }
    return normalize(vector);
  }
}
