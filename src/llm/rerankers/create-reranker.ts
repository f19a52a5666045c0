import type { RerankConfig } from '../../config';
import type { Logger } from '../../logger';
import { CohereReranker } from './cohere.reranker';
import type { Reranker, Reranking } from './reranker';
import { TeiReranker } from './tei.reranker';

/** The reranker RERANK_PROVIDER names, or null (none, the default). */
export function createReranker(config: RerankConfig): Reranker | null {
  switch (config.provider) {
    case 'cohere':
      return new CohereReranker({ baseUrl: config.url!, model: config.model!, apiKey: config.apiKey, timeoutMs: config.timeoutMs });
    case 'tei':
      return new TeiReranker({ baseUrl: config.url!, apiKey: config.apiKey, timeoutMs: config.timeoutMs });
    default:
      return null;
  }
}

/** The configured reranker with how code search uses it, or null when RERANK_PROVIDER is none. */
export function createReranking(config: RerankConfig, logger: Logger): Reranking | null {
  const reranker = createReranker(config);
  return reranker ? { reranker, candidates: config.topN, weight: config.weight, maxChars: config.maxChars, logger } : null;
}
