import { httpError } from '../provider-errors';
import { retryDelay, sleep } from '../retry-delay';
import { LlmError } from '../types';
import { normalize, type Embedder } from './embedder';

export type OpenAiCompatibleEmbedderOptions = {
  model: string;
  /** Default https://api.openai.com/v1 (Ollama: http://127.0.0.1:11434/v1). */
  baseUrl?: string;
  apiKey?: string;
  /** The model's vector size: checked on every answer. */
  dimensions: number;
  /** Texts per request. Default 64. */
  batchSize?: number;
  /** Per request. Default 60 s. */
  timeoutMs?: number;
  /** Retries of retryable failures per batch. Default 2. */
  maxRetries?: number;
};

type EmbeddingsResponse = { data?: Array<{ embedding?: number[]; index?: number }> };

/** Any OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM, TEI, LM Studio), in batches. */
export class OpenAiCompatibleEmbedder implements Embedder {
  readonly name = 'openai';
  readonly version: string;
  readonly dimensions: number;
  private readonly url: string;

  constructor(private readonly options: OpenAiCompatibleEmbedderOptions) {
    this.dimensions = options.dimensions;
    this.version = `openai:${options.model}:${options.dimensions}`;
    this.url = `${new URL(options.baseUrl ?? 'https://api.openai.com/v1').toString().replace(/\/+$/, '')}/embeddings`;
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    const batchSize = this.options.batchSize ?? 64;
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      vectors.push(...(await this.embedBatch(texts.slice(start, start + batchSize), options.signal)));
    }
    return vectors;
  }

  private async embedBatch(texts: readonly string[], signal: AbortSignal | undefined): Promise<number[][]> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.request(texts, signal);
      } catch (error) {
        if (!(error instanceof LlmError) || !error.isRetryable || attempt >= (this.options.maxRetries ?? 2) || signal?.aborted) throw error;
        await sleep(retryDelay({ attempt, error, baseDelayMs: 500, maxDelayMs: 8000 }), signal);
      }
    }
  }

  private async request(texts: readonly string[], signal: AbortSignal | undefined): Promise<number[][]> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 60_000);
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.options.model, input: texts }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (error) {
      if (signal?.aborted) throw new LlmError({ kind: 'aborted', message: 'embedding request aborted', cause: error });
      if (timeout.aborted)
        throw new LlmError({
          kind: 'timeout',
          message: `embeddings: no answer within ${this.options.timeoutMs ?? 60_000} ms`,
          cause: error,
        });
      throw new LlmError({ kind: 'connection', message: `embeddings: cannot reach ${new URL(this.url).host}`, cause: error });
    }
    const bodyText = await response.text();
    if (!response.ok)
      throw httpError({
        providerName: 'embeddings',
        status: response.status,
        headers: response.headers,
        bodyText,
        secret: this.options.apiKey,
      });
    let body: EmbeddingsResponse;
    try {
      body = JSON.parse(bodyText) as EmbeddingsResponse;
    } catch (error) {
      throw new LlmError({ kind: 'stream', message: 'embeddings: the answer is not JSON', cause: error });
    }
    const data = [...(body.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    if (data.length !== texts.length || data.some((item) => item.embedding?.length !== this.dimensions)) {
      throw new LlmError({ kind: 'stream', message: `embeddings: expected ${texts.length} vectors of ${this.dimensions} dimensions` });
    }
    return data.map((item) => normalize(item.embedding!));
  }
}
