import { UnrecoverableError, type Job } from 'bullmq';

/**
 * Whether a job BullMQ reports `failed` will not run again: its error is unrecoverable (as BullMQ's
 * own for a job that stalled more often than allowed) or it used its last attempt. Read from the
 * event, not from Redis: a queue that removes failed jobs has no failed job to ask about.
 */
export function failedForGood(job: Pick<Job, 'attemptsMade' | 'opts'>, error: Error | undefined): boolean {
  return error instanceof UnrecoverableError || error?.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
}
