import { Worker, type ConnectionOptions } from 'bullmq';
import { bullPrefix, QUEUE_NAMES } from '../queues';
import type { Services } from '../services';
import { maintenanceProcessor } from './maintenance.worker';

export type Workers = { workers: Worker[]; close(): Promise<void> };

/** Starts one BullMQ worker per queue. */
export function startWorkers(services: Services, connection: ConnectionOptions): Workers {
  const workers = [new Worker(QUEUE_NAMES.maintenance, maintenanceProcessor(services), { connection, prefix: bullPrefix(services.config.redisPrefix), concurrency: 1 })];
  for (const worker of workers) {
    worker.on('error', (error) => services.logger.warn({ event: 'worker_error', queue: worker.name, err: error }, 'worker error'));
    worker.on('failed', (job, error) =>
      services.logger.warn({ event: 'job_failed', queue: worker.name, jobId: job?.id, attempts: job?.attemptsMade, err: error }, 'job failed'),
    );
  }
  return {
    workers,
    close: async () => {
      await Promise.all(workers.map((worker) => worker.close()));
    },
  };
}
