import { createHash } from 'node:crypto';
import { Queue, type ConnectionOptions, type Job } from 'bullmq';
import { bullPrefix } from './redis-keys';
import { turnBatch } from './turn-batch';
import type { Logger } from './logger';

/** Queue names; processors live in src/workers, services enqueue through this module. */
export const QUEUE_NAMES = { maintenance: 'maintenance', chat: 'chat', indexing: 'indexing' } as const;

export const MAINTENANCE_JOBS = {
  purgeExpiredThreads: 'purge-expired-threads',
  refreshTableStatistics: 'refresh-table-statistics',
} as const;

/** One chat answer to generate: everything else is read from the stored user message. */
export type ChatJob = {
  requestId: string;
  userId: number;
  /** The editor's current file and selection: sent with the request, not stored with the message. */
  currentFile?: { fileName: string; selectedText: string; contentAboveCursor?: string | null; contentBelowCursor?: string | null } | null;
  /** Answer this earlier request's prompt instead (the user confirmed what the gatekeeper asked). */
  promptRequestId?: string | null;
  /** The gatekeeper's intent for the prompt, which picks the system prompt's task. */
  intent?: string | null;
};
export const CHAT_JOB_NAME = 'complete-chat';

/** A table statistics refresh (refreshTableStatistics): which tables (default all), and whether grown or not. */
export type StatisticsJob = { tables?: string[]; always?: boolean };

/** Index (or drop) one ref of a project; the worker reads the ref's newest commit when it runs. */
export type IndexJob = {
  projectId: number;
  ref: string;
  /** Rebuild fully even when an incremental run would do. */
  force?: boolean;
  /** The push deleted the branch. */
  deleted?: boolean;
  /** What asked for it: push, api, chat, embedder-change. */
  reason: 'push' | 'api' | 'chat' | 'embedder-change';
  /** The pushed commit, when a push asked (the run still indexes the ref's newest commit). */
  commitSha?: string | null;
};
export const INDEX_JOB_NAME = 'index-repository';

/** Ids of index jobs: one per project and ref (a digest of the ref, which may hold any character). */
export function indexJobKey(job: Pick<IndexJob, 'projectId' | 'ref'>): string {
  return `index-${job.projectId}-${createHash('sha256').update(job.ref).digest('hex').slice(0, 16)}`;
}

export type Queues = {
  maintenance: Queue;
  chat: Queue<ChatJob>;
  indexing: Queue<IndexJob>;
  /**
   * Enqueues an index run for a project's ref and gives its job id. Runs for one ref never overlap:
   * pushes within the debounce time fold into the waiting job (its start moves back), and a push
   * while a run is active leaves exactly one job to run after it; either way with the flags merged
   * (mergeIndexJobs).
   */
  enqueueIndex(job: IndexJob, options?: { debounceMs?: number }): Promise<string>;
  /**
   * Enqueues the answer to a stored user message; the request id is the job id, so a repeat is a
   * no-op. The jobs enqueued in one turn of the event loop go to Redis together (addBulk: one
   * write of their scripts); each caller still resolves only once its own job is in the queue.
   */
  enqueueChat(job: ChatJob): Promise<void>;
  /** On the maintenance queue, so that an index run's next job does not wait for it. */
  enqueueStatistics(job: StatisticsJob): Promise<void>;
  close(): Promise<void>;
};

export type QueueOptions = {
  connection: ConnectionOptions;
  /** Redis key prefix of this instance; BullMQ keys go under `<prefix>:bull`. */
  prefix: string;
  logger: Logger;
};

export function createQueues(options: QueueOptions): Queues {
  const maintenance = new Queue(QUEUE_NAMES.maintenance, {
    connection: options.connection,
    prefix: bullPrefix(options.prefix),
    defaultJobOptions: { removeOnComplete: 100, removeOnFail: 500, attempts: 3, backoff: { type: 'exponential', delay: 5000 } },
  });
  const chat = new Queue<ChatJob>(QUEUE_NAMES.chat, {
    connection: options.connection,
    prefix: bullPrefix(options.prefix),
    // Provider retries happen inside the job; these cover a crashed or unreachable worker dependency.
    defaultJobOptions: { removeOnComplete: 1000, removeOnFail: 1000, attempts: 3, backoff: { type: 'exponential', delay: 1000 } },
  });
  const indexing = new Queue<IndexJob>(QUEUE_NAMES.indexing, {
    connection: options.connection,
    prefix: bullPrefix(options.prefix),
    // Transient failures (database, embedding provider, a crashed worker) retry with backoff; bad
    // input (an unreadable repository, a missing project) is unrecoverable and fails at once.
    // The outcome of a run is kept on the index row (state, lastError), not in Redis.
    defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 4, backoff: { type: 'exponential', delay: 2000 } },
  });
  // A group that failed runs each job again alone: an add whose job is already there (the group
  // added it before another failed) is a no-op, as the job id is the request id.
  const enqueueChatJob = turnBatch<ChatJob, unknown>({
    runOne: (job) => chat.add(CHAT_JOB_NAME, job, { jobId: job.requestId }),
    runMany: (jobs) => chat.addBulk(jobs.map((job) => ({ name: CHAT_JOB_NAME, data: job, opts: { jobId: job.requestId } }))),
  });
  for (const queue of [maintenance, chat, indexing] as Queue[]) {
    queue.on('error', (error) => options.logger.warn({ event: 'queue_error', queue: queue.name, err: error }, 'queue error'));
  }
  return {
    maintenance,
    chat,
    indexing,
    enqueueIndex: async (request, enqueueOptions = {}) => {
      const key = indexJobKey(request);
      const delay = enqueueOptions.debounceMs ?? 0;
      // Deduplication keeps the data of the job already waiting (or stored to follow the active one): the
      // flags of this request are merged into it, so a forced rebuild is not run as a push's incremental run,
      // and a branch deleted then pushed again is indexed, not dropped. (A read, then a write: two
      // requests for one ref within the same milliseconds can still keep only one's flags.)
      const { waiting, data } = await pendingIndexJob(indexing, key);
      const job = data ? mergeIndexJobs(data, request) : request;
      if (waiting) await waiting.updateData(job).catch(() => undefined); // it may have started meanwhile: the add below follows it
      const added = await indexing.add(INDEX_JOB_NAME, job, {
        // Deterministic: the same request twice is one job. Finished jobs are removed at once, so a
        // later request with the same id (another rebuild of the same branch) is a new job.
        jobId: [key, job.commitSha?.slice(0, 12) ?? job.reason, job.force ? 'force' : '', job.deleted ? 'deleted' : '']
          .filter(Boolean)
          .join('-'),
        delay,
        deduplication: { id: key, keepLastIfActive: true, ...(delay > 0 ? { reschedule: true } : {}) },
      });
      return added.id!;
    },
    enqueueChat: async (job) => {
      await enqueueChatJob(job);
    },
    enqueueStatistics: async (job) => {
      await maintenance.add(MAINTENANCE_JOBS.refreshTableStatistics, job);
    },
    close: async () => {
      await Promise.all([maintenance.close(), chat.close(), indexing.close()]);
    },
  };
}

/**
 * Two requests for one ref folded into one job: the later one's ref state (deleted or not, its
 * commit and reason) with a rebuild if either asked for one.
 */
export function mergeIndexJobs(earlier: IndexJob, later: IndexJob): IndexJob {
  const force = Boolean(earlier.force || later.force);
  return { ...later, ...(force ? { force } : {}) };
}

/**
 * The index job of a ref that has not started: the deduplicated job while it waits (or is delayed), or
 * the data BullMQ keeps to start after the active one (keepLastIfActive: a hash `dn:<id>` of the queue).
 */
async function pendingIndexJob(queue: Queue<IndexJob>, key: string): Promise<{ waiting: Job<IndexJob> | null; data: IndexJob | null }> {
  const id = await queue.getDeduplicationJobId(key);
  const current = id ? await queue.getJob(id) : undefined;
  if (current) {
    const state = await current.getState();
    if (state === 'waiting' || state === 'delayed' || state === 'prioritized') return { waiting: current, data: current.data };
  }
  const client = await queue.getBackend().client;
  const next = await client.hget(queue.toKey(`dn:${key}`), 'data');
  return { waiting: null, data: next ? (JSON.parse(next) as IndexJob) : null };
}

/**
 * Registers the maintenance schedules (idempotent: one scheduler per id): the hourly purge of what users stored past its
 * retention (expired conversation threads and legacy messages, old code suggestions and expired sessions' documents), and
 * every 10 minutes the table statistics autovacuum would keep where none runs.
 */
export async function scheduleMaintenance(queues: Queues, everyMs = 60 * 60 * 1000, statisticsEveryMs = 10 * 60 * 1000): Promise<void> {
  await queues.maintenance.upsertJobScheduler(
    MAINTENANCE_JOBS.purgeExpiredThreads,
    { every: everyMs },
    { name: MAINTENANCE_JOBS.purgeExpiredThreads },
  );
  await queues.maintenance.upsertJobScheduler(
    MAINTENANCE_JOBS.refreshTableStatistics,
    { every: statisticsEveryMs },
    { name: MAINTENANCE_JOBS.refreshTableStatistics },
  );
}
