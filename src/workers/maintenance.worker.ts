import { UnrecoverableError, type Job } from 'bullmq';
import { purgeExpiredThreads } from '../chat/threads.service';
import { refreshTableStatistics } from '../db/table-statistics';
import { MAINTENANCE_JOBS, type StatisticsJob } from '../queues';
import type { Services } from '../services';

/** Processes maintenance jobs: thin, the work is in the services. */
export function maintenanceProcessor(services: Pick<Services, 'prisma' | 'logger'>) {
  return async (job: Job): Promise<{ purged: number } | { analyzed: string[] }> => {
    switch (job.name) {
      case MAINTENANCE_JOBS.purgeExpiredThreads: {
        const purged = await purgeExpiredThreads(services.prisma);
        services.logger.info({ event: 'expired_threads_purged', jobId: job.id, purged }, 'purged expired conversation threads');
        return { purged };
      }
      case MAINTENANCE_JOBS.refreshTableStatistics: {
        // The schedule's jobs carry no data (all tables, grown ones); an index run's name its tables.
        const data = (job.data ?? {}) as StatisticsJob;
        const analyzed = await refreshTableStatistics(services.prisma, { tables: data.tables, always: data.always === true });
        if (analyzed.length)
          services.logger.info({ event: 'table_statistics_refreshed', jobId: job.id, analyzed }, 'analyzed grown tables');
        return { analyzed };
      }
      default:
        throw new UnrecoverableError(`unknown maintenance job ${job.name}`);
    }
  };
}
