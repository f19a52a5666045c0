import { Queue, type ConnectionOptions } from 'bullmq';
import type { Logger } from './logger';

/** Queue names; processors live in src/workers, services enqueue through this module. */
export const QUEUE_NAMES = { maintenance: 'maintenance' } as const;

export const MAINTENANCE_JOBS = { purgeExpiredThreads: 'purge-expired-threads' } as const;

export type Queues = { maintenance: Queue; close(): Promise<void> };

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
  maintenance.on('error', (error) => options.logger.warn({ event: 'queue_error', queue: QUEUE_NAMES.maintenance, err: error }, 'queue error'));
  return {
    maintenance,
    close: async () => {
      await maintenance.close();
    },
  };
}

/** Registers the hourly purge of expired conversation threads (idempotent: one scheduler per id). */
export async function scheduleMaintenance(queues: Queues, everyMs = 60 * 60 * 1000): Promise<void> {
  await queues.maintenance.upsertJobScheduler(MAINTENANCE_JOBS.purgeExpiredThreads, { every: everyMs }, { name: MAINTENANCE_JOBS.purgeExpiredThreads });
}
