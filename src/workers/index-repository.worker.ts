import { UnrecoverableError, type Job } from 'bullmq';
import { CODE_INDEX_TABLES } from '../db/table-statistics';
import { isAppError } from '../errors';
import { indexRepository, type IndexRunResult } from '../indexing/index-repository';
import { failAbandonedRun } from '../indexing/code-index.service';
import { observeIndexRun } from '../metrics/record';
import type { IndexJob } from '../queues';
import { publishSnapshotActivated } from '../search/keyword-warm-up';
import type { Services } from '../services';
import { failedForGood } from './failed-for-good';

/** Runs one index job: thin, the work is in src/indexing. Bad input fails at once; the rest retries. */
export function indexRepositoryProcessor(
  services: Pick<Services, 'prisma' | 'logger' | 'config' | 'embedder' | 'chunker' | 'queues' | 'events'>,
) {
  return async (job: Job<IndexJob>): Promise<IndexRunResult> => {
    const started = Date.now();
    let lastReport = 0;
    try {
      const before = await activeSnapshotOf(services, job.data);
      const result = await indexRepository({
        prisma: services.prisma,
        embedder: services.embedder,
        chunker: services.chunker,
        transactionChunks: services.config.indexing.transactionChunks,
        // The embedded database is one session (requests wait for its statement in progress): smaller batches keep
        // each short, and no chunking beside them (the chunk thread would take a core from the database's thread).
        batchFiles: services.config.databaseUrl ? 200 : 50,
        pipeline: Boolean(services.config.databaseUrl),
        logger: services.logger,
        dataDir: services.config.dataDir,
        gitlab: services.config.gitlab,
        projectId: job.data.projectId,
        ref: job.data.ref,
        force: job.data.force,
        deleted: job.data.deleted,
        maxFileBytes: services.config.indexing.maxFileBytes,
        onProgress: (progress) => {
          if (Date.now() - lastReport < 500 && progress.phase === 'indexing') return;
          lastReport = Date.now();
          void job.updateProgress(progress).catch(() => undefined);
        },
      });
      observeIndexRun({ startedAt: started, result });
      services.logger.info(
        {
          event: 'index_job_done',
          jobId: job.id,
          projectId: job.data.projectId,
          reason: job.data.reason,
          ...result,
          durationMs: Date.now() - started,
        },
        'index job done',
      );
      if (result.outcome === 'indexed') {
        await announceSnapshot(services, { job, replaced: before });
        await refreshCodeStatistics(services, job.id, { always: result.mode === 'full' });
      }
      return result;
    } catch (error) {
      observeIndexRun({ startedAt: started, result: null });
      // The log keeps what users do not see (paths, git's stderr): internalMessage and the cause.
      services.logger.warn(
        { event: 'index_job_failed', jobId: job.id, projectId: job.data.projectId, ref: job.data.ref, err: error },
        'index job failed',
      );
      // AppErrors other than INTERNAL and UNAVAILABLE (GitLab not answering) are the request's fault (no repository, no
      // such branch): retrying cannot help.
      if (isAppError(error) && error.code !== 'INTERNAL' && error.code !== 'UNAVAILABLE') throw new UnrecoverableError(error.userMessage);
      throw error;
    }
  };
}

const activeSnapshotOf = async (services: Pick<Services, 'prisma'>, job: Pick<IndexJob, 'projectId' | 'ref'>) =>
  (
    await services.prisma.codeIndex.findUnique({
      where: { projectId_ref: { projectId: job.projectId, ref: job.ref } },
      select: { activeSnapshotId: true },
    })
  )?.activeSnapshotId ?? null;

/**
 * Tells the processes that serve searches which snapshot the run activated, so they build its
 * keyword index before the first question (src/search/keyword-warm-up.ts). A failure is logged:
 * the snapshot is active, and the first search builds the index.
 */
async function announceSnapshot(
  services: Pick<Services, 'prisma' | 'events' | 'config' | 'logger'>,
  options: { job: Job<IndexJob>; replaced: bigint | null },
): Promise<void> {
  const { job } = options;
  try {
    const active = await activeSnapshotOf(services, job.data);
    if (active === null || active === options.replaced) return;
    await publishSnapshotActivated({
      events: services.events,
      prefix: services.config.redisPrefix,
      event: {
        projectId: job.data.projectId,
        snapshotId: String(active),
        replacedSnapshotId: options.replaced === null ? null : String(options.replaced),
      },
    });
  } catch (error) {
    services.logger.warn(
      { event: 'snapshot_announce_failed', jobId: job.id, projectId: job.data.projectId, err: error },
      'could not announce the new snapshot',
    );
  }
}

/**
 * The code tables' statistics after a run that wrote (refreshTableStatistics, on the maintenance
 * queue: the next index job does not wait for it), so the searches that follow are planned for their
 * new size. After a full run always: a project the statistics do not know is estimated at a row or
 * two, however many it has, and a small project added to large tables grows them by less than a
 * tenth. After an incremental run (a push) only when they grew: an ANALYZE holds the embedded
 * database 0.1-0.2 s. A failure is logged: the run's snapshot is already active.
 */
async function refreshCodeStatistics(
  services: Pick<Services, 'queues' | 'logger'>,
  jobId: string | undefined,
  options: { always: boolean },
): Promise<void> {
  try {
    await services.queues.enqueueStatistics({ tables: [...CODE_INDEX_TABLES], always: options.always });
  } catch (error) {
    services.logger.warn({ event: 'table_statistics_failed', jobId, err: error }, 'could not ask for the code tables to be analyzed');
  }
}

/**
 * An index job failed for good: when its processor failed, the index says so already; when BullMQ
 * failed it without running it (it stalled more often than allowed: its workers died mid-run), the
 * index would say `indexing` forever, so its run is marked failed here (failAbandonedRun).
 */
export function failAbandonedIndexRun(services: Pick<Services, 'prisma' | 'logger'>) {
  return async (job: Job<IndexJob> | undefined, error: Error): Promise<void> => {
    try {
      if (!job || job.data.deleted || !failedForGood(job, error)) return;
      const failedAt = new Date(job.finishedOn ?? Date.now());
      if (await failAbandonedRun(services.prisma, { projectId: job.data.projectId, ref: job.data.ref, failedAt }))
        services.logger.warn(
          { event: 'index_run_abandoned', jobId: job.id, projectId: job.data.projectId, ref: job.data.ref, reason: job.failedReason },
          'an index run no worker finished is marked failed',
        );
    } catch (error) {
      services.logger.error({ event: 'index_failure_unsaved', jobId: job?.id, err: error }, 'could not mark an abandoned index run failed');
    }
  };
}
