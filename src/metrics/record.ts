import type { Job, Worker } from 'bullmq';
import type { WebSocketServer } from 'ws';
import type { IndexRunResult } from '../indexing/index-repository';
import { LlmError, type LlmProvider, type LlmRequest, type LlmStreamEvent } from '../llm/types';
import { QUEUE_NAMES } from '../queues';
import { bounded, metrics } from './registry';

/**
 * The thin calls the rest of the code makes into the metrics: each takes what its edge already
 * has and keeps labels bounded.
 */

const QUEUES: ReadonlySet<string> = new Set(Object.values(QUEUE_NAMES));
const seconds = (fromMs: number, toMs: number = Date.now()) => Math.max(0, toMs - fromMs) / 1000;

export type SocketTransport = 'graphql_ws' | 'action_cable';
const socketServers = new Map<SocketTransport, Set<WebSocketServer>>();

/** Counts a WebSocket server's open connections at scrape time, until the server closes. */
export function observeSocketServer(transport: SocketTransport, server: WebSocketServer): void {
  const servers = socketServers.get(transport) ?? new Set();
  socketServers.set(transport, servers);
  servers.add(server);
  server.once('close', () => servers.delete(server));
}

export function collectSocketConnections(): void {
  for (const transport of ['graphql_ws', 'action_cable'] as const) {
    let open = 0;
    for (const server of socketServers.get(transport) ?? []) open += server.clients.size;
    metrics.websocketConnections.set({ transport }, open);
  }
}

/**
 * Counts a graphql-ws operation's result as an open subscription until it ends or is returned
 * (graphql-ws's onOperation hook); other results pass through unchanged. The wrapper is a plain
 * iterator, not an async generator: a generator's return() would wait behind the pending next()
 * (for a chat subscription, until the next event), so a closed socket would keep its source open.
 */
export function countSubscription<Result>(transport: SocketTransport, result: Result): Result | undefined {
  const source = result as unknown as AsyncIterable<unknown> | null | undefined;
  if (!source || typeof source[Symbol.asyncIterator] !== 'function') return undefined;
  const iterator = source[Symbol.asyncIterator]();
  let open = true;
  const close = () => {
    if (open) metrics.websocketSubscriptions.dec({ transport });
    open = false;
  };
  metrics.websocketSubscriptions.inc({ transport });
  const counted: AsyncIterableIterator<unknown> = {
    next: async (...args: [] | [unknown]) => {
      try {
        const next = await iterator.next(...args);
        if (next.done) close();
        return next;
      } catch (error) {
        close();
        throw error;
      }
    },
    return: async (value?: unknown) => {
      close();
      return iterator.return ? iterator.return(value) : { done: true, value };
    },
    throw: async (error?: unknown) => {
      close();
      if (iterator.throw) return iterator.throw(error);
      throw error;
    },
    [Symbol.asyncIterator]() {
      return counted;
    },
  };
  return counted as unknown as Result;
}

/** Counts an ActionCable subscription as open until its stop() (unsubscribe or disconnect). */
export function withSubscriptionCount<Run extends { stop(): void }>(transport: SocketTransport, run: Run): Run {
  metrics.websocketSubscriptions.inc({ transport });
  let open = true;
  return {
    ...run,
    stop: () => {
      if (open) metrics.websocketSubscriptions.dec({ transport });
      open = false;
      run.stop();
    },
  };
}

/** Job counts, durations, waits and stalls of one BullMQ worker of this process. */
export function observeWorker(worker: Worker): void {
  const queue = bounded(worker.name, QUEUES);
  worker.on('active', (job: Job) => {
    if (job.processedOn) metrics.queueJobWait.observe({ queue }, seconds(job.timestamp + (job.opts.delay ?? 0), job.processedOn));
  });
  const finished = (status: 'completed' | 'failed') => (job: Job | undefined) => {
    metrics.queueJobsProcessed.inc({ queue, status });
    if (job?.processedOn) metrics.queueJobDuration.observe({ queue, status }, seconds(job.processedOn, job.finishedOn ?? Date.now()));
  };
  worker.on('completed', finished('completed'));
  worker.on('failed', finished('failed'));
  worker.on('stalled', () => metrics.queueJobsStalled.inc({ queue }));
}

/**
 * Latency, first text, tokens and failures of every request to the chat model (chat and code
 * suggestions). Only `stream` is wrapped; every other member is the provider's own.
 */
export function instrumentProvider(provider: LlmProvider | null): LlmProvider | null {
  if (!provider) return null;
  const labels = { provider: provider.name };
  const measured = {
    async *stream(request: LlmRequest): AsyncIterable<LlmStreamEvent> {
      const started = Date.now();
      let outcome = 'cancelled';
      let first = true;
      try {
        for await (const event of provider.stream(request)) {
          if (event.type === 'text-delta' && first) {
            first = false;
            metrics.llmFirstToken.observe(labels, seconds(started));
          }
          if (event.type === 'finish') {
            metrics.llmTokens.inc({ ...labels, direction: 'input' }, event.usage?.inputTokens ?? 0);
            metrics.llmTokens.inc({ ...labels, direction: 'output' }, event.usage?.outputTokens ?? 0);
          }
          yield event;
        }
        outcome = 'ok';
      } catch (error) {
        outcome = error instanceof LlmError ? error.kind : 'other';
        throw error;
      } finally {
        metrics.llmDuration.observe({ ...labels, outcome }, seconds(started));
      }
    },
  };
  return new Proxy(provider, {
    get(target, key) {
      if (key === 'stream') return (request: Parameters<typeof measured.stream>[0]) => measured.stream(request);
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export function countLlmRetry(provider: string, error: LlmError): void {
  metrics.llmRetries.inc({ provider, kind: error.kind });
}

const RERANK_OUTCOMES: ReadonlySet<string> = new Set(['ok', 'timeout', 'connection', 'http', 'stream', 'aborted', 'prompt_too_long']);

/** One reranking of code search results: 'ok', or the LlmError kind it failed with ('other' for anything else). */
export function observeRerank(rerank: { provider: string; outcome: string; startedAt: number }): void {
  const labels = { provider: bounded(rerank.provider, new Set(['cohere', 'tei'])), outcome: bounded(rerank.outcome, RERANK_OUTCOMES) };
  metrics.rerankRequests.inc(labels);
  metrics.rerankDuration.observe(labels, seconds(rerank.startedAt));
}

export type ChatOutcome = 'answered' | 'gatekeeper' | 'no_model' | 'codebase_unavailable' | 'error' | 'superseded';

/** The first chunk of an answer to the message stored at `askedAt`. */
export function observeChatFirstChunk(askedAt: Date): void {
  metrics.chatFirstChunk.observe(seconds(askedAt.getTime()));
}

/** One chat answer: its outcome, GitLab error code, and (when known) the time since the question. */
export function observeChatAnswer(answer: { outcome: ChatOutcome; errorCode?: string | null; askedAt?: Date }): void {
  metrics.chatAnswers.inc({ outcome: answer.outcome, error_code: answer.errorCode ?? '' });
  if (answer.askedAt) metrics.chatAnswer.observe({ outcome: answer.outcome }, seconds(answer.askedAt.getTime()));
}

const VERDICTS: ReadonlySet<string> = new Set(['CLEAR', 'NEEDS_CONFIRMATION', 'NEEDS_CLARIFICATION', 'MULTI_INTENT']);

export function countGatekeeperVerdict(status: string): void {
  metrics.gatekeeperVerdicts.inc({ status: bounded(status, VERDICTS) });
}

/** The gatekeeper answered a prompt itself: one model call saved. */
export function countGatekeeperAnswer(): void {
  metrics.gatekeeperCallsSaved.inc();
  observeChatAnswer({ outcome: 'gatekeeper' });
}

/** One index run: its outcome, duration, and the files, chunks and bytes it went through. */
export function observeIndexRun(run: { startedAt: number; result: IndexRunResult | null }): void {
  const outcome = run.result?.outcome ?? 'failed';
  metrics.indexRuns.inc({ outcome });
  metrics.indexDuration.observe({ outcome }, seconds(run.startedAt));
  if (run.result && run.result.outcome !== 'dropped') {
    metrics.indexFiles.observe(run.result.filesRead);
    metrics.indexChunks.observe(run.result.chunksEmbedded);
    metrics.indexBytes.observe(run.result.bytesRead);
  }
}

/** The request connection's view of Redis (FailFastRedis): answering or not, and the commands it failed at once. */
export const redisAvailability = {
  onChange: (answering: boolean): void => metrics.redisAnswering.set(answering ? 1 : 0),
  onRefused: (): void => metrics.redisCommandsRefused.inc(),
};

/** The requests' database pool's view of PostgreSQL (request-timeout.ts): answering or not, and what it refused. */
export const databaseAvailability = {
  onChange: (answering: boolean): void => metrics.databaseAnswering.set(answering ? 1 : 0),
  onRefused: (): void => metrics.databaseStatementsRefused.inc(),
};

/** A snapshot's keyword index built, loaded from its stored form, or failed, for a search or by the warm-up, with how long it took. */
export function observeKeywordIndexBuild(build: {
  trigger: 'search' | 'warm_up';
  startedAt: number;
  outcome: 'built' | 'loaded' | 'failed';
}): void {
  metrics.keywordIndexBuilds.inc({ trigger: build.trigger, outcome: build.outcome });
  if (build.outcome !== 'failed')
    metrics.keywordIndexBuildDuration.observe({ trigger: build.trigger, outcome: build.outcome }, seconds(build.startedAt));
}
