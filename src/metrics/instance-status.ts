import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../config';
import type { CodeIndexState } from '../db/generated/enums';
import type { PrismaClient } from '../db/prisma';
import { gatekeeperCallsSavedKey } from '../redis-keys';

/**
 * What an operator asks of a running instance, read from its dependencies: whether the database
 * and Redis answer, how full the queues are and whether workers listen on them, and the code
 * indexes by state. Readiness, the metrics scrape and `admin status` all read it here.
 */

export type Check = { status: 'ok' | 'failed'; message?: string };

/** Job states a queue reports; `completed` and `failed` count the jobs kept in Redis, not all ever run. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

export type QueueStatus = { name: string; jobs: Record<QueueState, number>; workers: number };

export const INDEX_STATES: readonly CodeIndexState[] = ['pending', 'indexing', 'ready', 'failed'];

/** Default: a dependency that has not answered in 2 s counts as failed. */
export const CHECK_TIMEOUT_MS = 2_000;

export function withTimeout<Value>(promise: Promise<Value>, timeoutMs: number, what: string): Promise<Value> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export type CheckOptions = {
  /** Default CHECK_TIMEOUT_MS. */
  timeoutMs?: number;
  /** What a failure says to anyone who asks: fixed words, never the error's text (it may name hosts). */
  message: string | ((error: unknown) => string);
  /** Where the error itself goes (the log). */
  onError?: (error: unknown) => void;
};

/** Runs a check with a time limit. */
export async function runCheck(run: () => Promise<unknown>, options: CheckOptions): Promise<Check> {
  try {
    await withTimeout(run(), options.timeoutMs ?? CHECK_TIMEOUT_MS, 'the check');
    return { status: 'ok' };
  } catch (error) {
    options.onError?.(error);
    return { status: 'failed', message: typeof options.message === 'string' ? options.message : options.message(error) };
  }
}

/** Thrown by a check whose message is safe to show as it is. */
export class CheckFailure extends Error {}

export const safeMessage = (fallback: string) => (error: unknown) => (error instanceof CheckFailure ? error.message : fallback);

export const checkDatabase = (prisma: PrismaClient) => prisma.$queryRawUnsafe('SELECT 1');
export const checkRedis = (redis: Redis) => redis.ping();

/** Each queue's jobs by state and the workers listening on it (across every process of the instance). */
export async function readQueues(queues: readonly Queue[], timeoutMs = CHECK_TIMEOUT_MS): Promise<QueueStatus[]> {
  return withTimeout(
    Promise.all(
      queues.map(async (queue) => {
        const [counts, workers] = await Promise.all([queue.getJobCounts(...QUEUE_STATES), queue.getWorkersCount()]);
        const jobs = Object.fromEntries(QUEUE_STATES.map((state) => [state, counts[state] ?? 0])) as Record<QueueState, number>;
        return { name: queue.name, jobs, workers };
      }),
    ),
    timeoutMs,
    'Redis',
  );
}

/** Queues no worker listens on: their jobs wait for ever. */
export function queuesWithoutWorkers(queues: readonly QueueStatus[]): string[] {
  return queues.filter((queue) => queue.workers === 0).map((queue) => queue.name);
}

/** Code indexes (one per project and ref) by state, every state present. */
export async function countIndexesByState(prisma: PrismaClient, timeoutMs = CHECK_TIMEOUT_MS): Promise<Record<CodeIndexState, number>> {
  const groups = await withTimeout(prisma.codeIndex.groupBy({ by: ['state'], _count: { _all: true } }), timeoutMs, 'the database');
  const counts = Object.fromEntries(INDEX_STATES.map((state) => [state, 0])) as Record<CodeIndexState, number>;
  for (const group of groups) counts[group.state] = group._count._all;
  return counts;
}

/** The Redis key counting, across every process, the chat prompts the gatekeeper answered without a model. */

export type InstanceSummary = {
  version: string;
  revision: string;
  database: Check & { kind: string };
  redis: Check;
  queues: QueueStatus[];
  indexes: Record<CodeIndexState, number> | null;
  model: { provider: string; model: string | null };
  embedder: { provider: string; model: string | null };
  /** Code search's reranker (RERANK_PROVIDER): none by default. */
  reranker: { provider: string; model: string | null };
  gatekeeper: { enabled: boolean; llmCallsSaved: number | null };
};

export type SummaryOptions = {
  prisma: PrismaClient;
  databaseKind: string;
  redis: Redis;
  queues: readonly Queue[];
  config: Pick<Config, 'llm' | 'embeddings' | 'rerank' | 'gatekeeper' | 'redisPrefix'>;
  version: string;
  revision: string;
  /** Default CHECK_TIMEOUT_MS. */
  timeoutMs?: number;
};

/** Everything `admin status` shows, each part read on its own so one failing dependency hides nothing else. */
export async function readInstanceSummary(options: SummaryOptions): Promise<InstanceSummary> {
  const timeoutMs = options.timeoutMs ?? CHECK_TIMEOUT_MS;
  const [database, redis, queues, indexes, saved] = await Promise.all([
    runCheck(() => checkDatabase(options.prisma), { message: 'the database did not answer', timeoutMs }),
    runCheck(() => checkRedis(options.redis), { message: 'Redis did not answer', timeoutMs }),
    readQueues(options.queues, timeoutMs).catch(() => []),
    countIndexesByState(options.prisma, timeoutMs).catch(() => null),
    withTimeout(options.redis.get(gatekeeperCallsSavedKey(options.config.redisPrefix)), timeoutMs, 'Redis').catch(() => undefined),
  ]);
  const { llm, embeddings } = options.config;
  return {
    version: options.version,
    revision: options.revision,
    database: { ...database, kind: options.databaseKind },
    redis,
    queues,
    indexes,
    model: { provider: llm.provider, model: llm.model ?? null },
    embedder: {
      provider: embeddings.provider,
      model: embeddings.provider === 'onnx' ? (embeddings.modelDir ?? null) : (embeddings.model ?? null),
    },
    reranker: { provider: options.config.rerank.provider, model: options.config.rerank.model ?? null },
    gatekeeper: { enabled: options.config.gatekeeper.enabled, llmCallsSaved: saved === undefined ? null : Number(saved ?? 0) },
  };
}
