import type { Logger } from '../../logger';

export type RerankRequest = {
  query: string;
  /** At least one; each is sent as it is (the caller bounds their length). */
  documents: readonly string[];
  /** Aborting stops the request and makes it throw an LlmError of kind 'aborted'. */
  signal?: AbortSignal;
};

/**
 * A cross-encoder behind an HTTP API: how relevant each document is to the query. Failures are
 * thrown as LlmError (HTTP status, isRetryable), as the model providers' are.
 */
export interface Reranker {
  /** The wire format: 'cohere' or 'tei'. */
  readonly name: string;
  /** The model asked for, or null when the server serves one and is not told (TEI). */
  readonly model: string | null;
  /**
   * One score per document, in the documents' order; higher is more relevant. Scores are only
   * comparable within one answer (servers return probabilities, logits or calibrated scores).
   */
  rerank(request: RerankRequest): Promise<number[]>;
}

/** A reranker with how code search uses it (RERANK_*): built once in the composition root. */
export type Reranking = {
  reranker: Reranker;
  /** The best files the reranker reorders (RERANK_TOP_N). Default 30. */
  candidates: number;
  /** The reranker's weight in the fusion with the search's own order, in (0, 1] (RERANK_WEIGHT). Default 0.5. */
  weight: number;
  /** Longest document sent, in characters (RERANK_MAX_CHARS). Default 1,200. */
  maxChars: number;
  /** Where a reranking that fell back to the search's own order is logged (`code_search_rerank_failed`). */
  logger: Logger;
};
