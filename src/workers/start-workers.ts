import { Worker, type ConnectionOptions, type Job } from 'bullmq';
import { GenerationRegistry } from '../chat/generation-registry';
import { QUEUE_NAMES, type ChatJob, type IndexJob } from '../queues';
import { bullPrefix } from '../redis-keys';
import { observeWorker } from '../metrics/record';
import type { Services } from '../services';
import { answerFailedJob, chatProcessor } from './chat.worker';
import { failAbandonedIndexRun, indexRepositoryProcessor } from './index-repository.worker';
import { maintenanceProcessor } from './maintenance.worker';

/** Chat answers mostly wait on the model: many can stream at once. */
const CHAT_CONCURRENCY = 16;

export type Workers = { workers: Worker[]; close(): Promise<void> };

/** Starts one BullMQ worker per queue. */
export async function startWorkers(services: Services, connection: ConnectionOptions): Promise<Workers> {
  const prefix = bullPrefix(services.config.redisPrefix);
  const registry = new GenerationRegistry();
  const stopCancelling = await services.chatEvents.onCancel((signal) => registry.cancel(signal));
  const workers = [
    new Worker(QUEUE_NAMES.maintenance, maintenanceProcessor(services), { connection, prefix, concurrency: 1 }),
    // A worker that dies mid-answer stops renewing its lock; another one takes the job over after
    // about lockDuration and answers it again (completeChat makes sure only one answer is stored).
    new Worker(QUEUE_NAMES.chat, chatProcessor(services, registry), {
      connection,
      prefix,
      concurrency: CHAT_CONCURRENCY,
      lockDuration: services.config.jobLockMs,
      stalledInterval: services.config.jobLockMs,
    }),
    // A worker that dies mid-index loses the job the same way; the next run drops the unfinished
    // snapshot, which search never saw.
    new Worker(QUEUE_NAMES.indexing, indexRepositoryProcessor(services), {
      connection,
      prefix,
      concurrency: services.config.indexing.concurrency,
      lockDuration: services.config.jobLockMs,
      stalledInterval: services.config.jobLockMs,
    }),
  ];
  workers[1].on('failed', (job, error) => void answerFailedJob(services)(job as Job<ChatJob> | undefined, error));
  workers[2].on('failed', (job, error) => void failAbandonedIndexRun(services)(job as Job<IndexJob> | undefined, error));
  for (const worker of workers) {
    observeWorker(worker);
    worker.on('error', (error) => services.logger.warn({ event: 'worker_error', queue: worker.name, err: error }, 'worker error'));
    worker.on('failed', (job, error) =>
      services.logger.warn(
        { event: 'job_failed', queue: worker.name, jobId: job?.id, attempts: job?.attemptsMade, err: error },
        'job failed',
      ),
    );
  }
  return {
    workers,
    close: async () => {
      await stopCancelling();
      await Promise.all(workers.map((worker) => worker.close()));
      registry.abortAll();
    },
  };
}
