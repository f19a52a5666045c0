import { postRerank, scoresByIndex, invalid } from './post-rerank';
import type { Reranker, RerankRequest } from './reranker';

export type TeiRerankerOptions = {
  /** The server's URL, `/rerank` is appended: http://127.0.0.1:8080. */
  baseUrl: string;
  apiKey?: string;
  /** Every attempt and wait together, for all batches at once. Default 2,000 ms. */
  timeoutMs?: number;
  /** Retries of retryable failures within the time limit. Default 1. */
  maxRetries?: number;
  /** Documents per request: TEI refuses more than its --max-client-batch-size (default 32) with 422. Default 32. */
  batchSize?: number;
};

/**
 * text-embeddings-inference's rerank route: `POST {baseUrl}/rerank {query, texts, truncate}`
 * answered by `[{index, score}, ...]`, best first (sigmoid scores; raw_scores is left false).
 * `truncate: true` has the server cut a pair that is still longer than the model's window instead
 * of refusing it. A cross-encoder scores each pair alone, so batches' scores compare.
 */
export class TeiReranker implements Reranker {
  readonly name = 'tei';
  readonly model = null;
  private readonly url: string;

  constructor(private readonly options: TeiRerankerOptions) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/rerank`;
  }

  async rerank(request: RerankRequest): Promise<number[]> {
    const batchSize = this.options.batchSize ?? 32;
    const batches: Array<readonly string[]> = [];
    for (let start = 0; start < request.documents.length; start += batchSize)
      batches.push(request.documents.slice(start, start + batchSize));
    const scored = await Promise.all(batches.map((texts) => this.rerankBatch(request, texts)));
    return scored.flat();
  }

  private async rerankBatch(request: RerankRequest, texts: readonly string[]): Promise<number[]> {
    const providerName = 'reranker (tei)';
    const body = await postRerank({
      providerName,
      url: this.url,
      apiKey: this.options.apiKey,
      body: { query: request.query, texts, truncate: true },
      timeoutMs: this.options.timeoutMs ?? 2_000,
      maxRetries: this.options.maxRetries ?? 1,
      signal: request.signal,
    });
    if (!Array.isArray(body)) throw invalid(providerName, 'no list of ranks');
    return scoresByIndex(
      (body as Array<{ index?: unknown; score?: unknown } | null>).map((rank) => ({ index: rank?.index, score: rank?.score })),
      texts.length,
      providerName,
    );
  }
}
