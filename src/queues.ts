import { Queue, type ConnectionOptions } from 'bullmq';
import type { Logger } from './logger';

/** Queue names; processors live in src/workers, services enqueue through this module. */
export const QUEUE_NAMES = { maintenance: 'maintenance', chat: 'chat' } as const;

export const MAINTENANCE_JOBS = { purgeExpiredThreads: 'purge-expired-threads' } as const;

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

export type Queues = {
  maintenance: Queue;
  chat: Queue<ChatJob>;
  /** Enqueues the answer to a stored user message; the request id is the job id, so a repeat is a no-op. */
  enqueueChat(job: ChatJob): Promise<void>;
  close(): Promise<void>;
};

export type QueueOptions = {
  connection: ConnectionOptions;
  /** Redis key prefix of this instance; BullMQ keys go under `<prefix>:bull`. */
  prefix: string;
  logger: Logger;
};

export const bullPrefix = (prefix: string) => `${prefix}:bull`;

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
  for (const queue of [maintenance, chat] as Queue[]) {
    queue.on('error', (error) => options.logger.warn({ event: 'queue_error', queue: queue.name, err: error }, 'queue error'));
  }
  return {
    maintenance,
    chat,
    enqueueChat: async (job) => {
      await chat.add(CHAT_JOB_NAME, job, { jobId: job.requestId });
    },
    close: async () => {
      await Promise.all([maintenance.close(), chat.close()]);
    },
  };
}

/** Registers the hourly purge of expired conversation threads (idempotent: one scheduler per id). */
export async function scheduleMaintenance(queues: Queues, everyMs = 60 * 60 * 1000): Promise<void> {
  await queues.maintenance.upsertJobScheduler(MAINTENANCE_JOBS.purgeExpiredThreads, { every: everyMs }, { name: MAINTENANCE_JOBS.purgeExpiredThreads });
}
