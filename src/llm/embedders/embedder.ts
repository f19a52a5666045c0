/** Turns texts into vectors of one fixed size; chunks and questions go through the same one. */
export interface Embedder {
  /** e.g. "lexical", "openai". */
  readonly name: string;
  /** Stored with every vector: a change of model or algorithm means re-embedding. */
  readonly version: string;
  readonly dimensions: number;
  /** One vector per text, in order, each L2-normalised. */
  embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
}

export function normalize(vector: number[]): number[] {
  let norm = 0;
  for (const value of vector) norm += value * value;
  if (norm === 0) return vector;
  const scale = 1 / Math.sqrt(norm);
  return vector.map((value) => value * scale);
}
