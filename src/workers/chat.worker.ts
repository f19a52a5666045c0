import { UnrecoverableError, type Job } from 'bullmq';
import { answerFailedRequest, completeChat, type CompleteChatOutcome } from '../chat/complete-chat';
import type { GenerationRegistry } from '../chat/generation-registry';
import { observeChatAnswer } from '../metrics/record';
import type { ChatJob } from '../queues';
import type { Services } from '../services';
import { failedForGood } from './failed-for-good';

/** Answers one chat request: thin, the work is in completeChat. */
export function chatProcessor(services: Services, registry: GenerationRegistry) {
  return async (job: Job<ChatJob>): Promise<{ outcome: string }> => {
    let outcome: CompleteChatOutcome;
    try {
      outcome = await completeChat({
        prisma: services.prisma,
        redis: services.redis,
        redisPrefix: services.config.redisPrefix,
        events: services.chatEvents,
        registry,
        llm: services.llm,
        llmConfig: services.config.llm,
        logger: services.logger,
        job: { ...job.data, jobId: job.id },
        codebase: {
          queues: services.queues,
          embedder: services.embedder,
          reranking: services.reranking,
          disabledCategories: services.config.disabledContextCategories,
          dataDir: services.config.dataDir,
          indexWaitMs: services.config.chatIndexWaitMs,
        },
      });
    } catch (error) {
      // The last attempt, or a failure no retry helps: the question gets GitLab's error answer, never none.
      // (BullMQ counts this attempt as made once the job is failed, after the processor.)
      if (failedForGood({ attemptsMade: job.attemptsMade + 1, opts: job.opts }, error as Error)) {
        await answerFailedRequest({
          ...services,
          userId: job.data.userId,
          requestId: job.data.requestId,
          events: services.chatEvents,
        }).catch((failure: unknown) =>
          services.logger.error(
            { event: 'chat_failure_unsaved', jobId: job.id, requestId: job.data.requestId, err: failure },
            'could not answer a failed request',
          ),
        );
      }
      throw error;
    }
    if (outcome === 'superseded') observeChatAnswer({ outcome });
    if (outcome === 'missing') {
      // Never dropped quietly: a request this database does not know is the sign of another
      // instance (another database) sharing REDIS_PREFIX. The job fails, visibly, and is kept.
      services.logger.error(
        { event: 'chat_job_orphaned', jobId: job.id, requestId: job.data.requestId, prefix: services.config.redisPrefix },
        'chat job for a request this database does not have',
      );
      throw new UnrecoverableError(
        `request ${job.data.requestId} is not in this instance's database: if several instances share REDIS_PREFIX ` +
          `"${services.config.redisPrefix}", give each its own`,
      );
    }
    services.logger.info({ event: 'chat_job_done', jobId: job.id, requestId: job.data.requestId, outcome }, 'chat job done');
    return { outcome };
  };
}

/**
 * A chat job failed for good whose processor did not answer it: above all one that stalled more
 * often than BullMQ allows (its workers died mid-answer). BullMQ's stalled check only marks such a
 * job and puts it back in line; the worker that fetches it next fails it without running it, and
 * says so with `failed`. Its question gets GitLab's error answer too. For a job the processor failed,
 * the answer is there already and this changes nothing (answerFailedRequest stores one answer).
 */
export function answerFailedJob(services: Services) {
  return async (job: Job<ChatJob> | undefined, error: Error): Promise<void> => {
    try {
      if (!job || !failedForGood(job, error)) return;
      await answerFailedRequest({ ...services, userId: job.data.userId, requestId: job.data.requestId, events: services.chatEvents });
    } catch (error) {
      services.logger.error({ event: 'chat_failure_unsaved', jobId: job?.id, err: error }, 'could not answer a failed request');
    }
  };
}
