import { invalid, postRerank, scoresByIndex } from './post-rerank';
import type { Reranker, RerankRequest } from './reranker';

export type CohereRerankerOptions = {
  /** The base URL `/rerank` is appended to: https://api.cohere.com/v2, https://api.jina.ai/v1, http://127.0.0.1:8000/v1 (vLLM). */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Every attempt and wait together. Default 2,000 ms. */
  timeoutMs?: number;
  /** Retries of retryable failures within the time limit. Default 1. */
  maxRetries?: number;
};

type CohereRerankResult = { index?: unknown; relevance_score?: unknown };
type CohereRerankResponse = { results?: unknown };

/**
 * The `/rerank` API Cohere made and Jina, vLLM and llama.cpp's server speak:
 * `POST {baseUrl}/rerank {model, query, documents, top_n}` answered by
 * `{results: [{index, relevance_score}, ...]}`, best first. `top_n` is the number of documents, so
 * every document comes back scored (vLLM reads 0 as "all", llama.cpp and Cohere a missing one).
 */
export class CohereReranker implements Reranker {
  readonly name = 'cohere';
  readonly model: string;
  private readonly url: string;

  constructor(private readonly options: CohereRerankerOptions) {
    this.model = options.model;
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/rerank`;
  }

  async rerank(request: RerankRequest): Promise<number[]> {
    if (request.documents.length === 0) return [];
    const providerName = 'reranker (cohere)';
    const body = (await postRerank({
      providerName,
      url: this.url,
      apiKey: this.options.apiKey,
      body: { model: this.model, query: request.query, documents: request.documents, top_n: request.documents.length },
      timeoutMs: this.options.timeoutMs ?? 2_000,
      maxRetries: this.options.maxRetries ?? 1,
      signal: request.signal,
    })) as CohereRerankResponse | null;
    if (!body || !Array.isArray(body.results)) throw invalid(providerName, 'no results list');
    return scoresByIndex(
      (body.results as Array<CohereRerankResult | null>).map((result) => ({ index: result?.index, score: result?.relevance_score })),
      request.documents.length,
      providerName,
    );
  }
}
