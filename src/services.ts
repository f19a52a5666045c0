import type { Redis } from 'ioredis';
import type { RequestLimiter } from './auth/rate-limits';
import type { ChatEventBus } from './chat/chat-events';
import type { EventBus } from './events/event-bus';
import type { PromptChecker } from './chat/gate-prompt';
import type { Config } from './config';
import type { PrismaClient } from './db/prisma';
import type { FileChunker } from './indexing/chunk-pool';
import type { Embedder } from './llm/embedders/embedder';
import type { Reranking } from './llm/rerankers/reranker';
import type { LlmProvider } from './llm/types';
import type { Logger } from './logger';
import type { Queues } from './queues';
import type { IntentThread } from './suggestions/intent-thread';
import type { SuggestionSessions } from './suggestions/sessions/sessions.service';

/** What the edges (resolvers, routes, workers, commands) are given: built once in the composition root. */
export type Services = {
  config: Config;
  prisma: PrismaClient;
  redis: Redis;
  logger: Logger;
  /** The git revision the service runs, or "unknown". */
  revision: string;
  /** Base of every web URL we answer (users, projects, avatars): EXTERNAL_URL, else the URL the API listens on. */
  externalUrl: string;
  queues: Queues;
  /** Redis pub/sub shared by every feature's events. */
  events: EventBus;
  /** Chat's channels on `events`. */
  chatEvents: ChatEventBus;
  /** Null when no model is configured (LLM_PROVIDER=none). */
  llm: LlmProvider | null;
  /** Turns code chunks and questions into vectors (EMBEDDINGS_PROVIDER). */
  embedder: Embedder;
  /** Reorders code search's best files (RERANK_PROVIDER); null when none is configured (the default). */
  reranking: Reranking | null;
  /** Chunks and embeds files for index runs: worker threads (INDEX_THREADS), or this thread. */
  chunker: FileChunker;
  /** The chat gatekeeper's first stage; null when turned off (GATEKEEPER=false). */
  gatekeeper: PromptChecker | null;
  /** GitLab's `ai_action` limit (AI_ACTION_RATE_LIMIT per user per 8 hours): aiAction and `glab duo ask`. */
  aiActionLimiter: RequestLimiter;
  /** GitLab's code suggestions limit (CODE_SUGGESTIONS_RATE_LIMIT_PER_MINUTE per user): completions and session generations. */
  codeSuggestionsLimiter: RequestLimiter;
  /** Code suggestions' intent detection, on a thread of its own and within INTENT_TIMEOUT_MS. */
  intent: Pick<IntentThread, 'detect'>;
  /** Continuous code suggestions (codeSuggestionSession* mutations and codeSuggestionUpdates). */
  suggestionSessions: SuggestionSessions;
};
