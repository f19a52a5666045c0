import { UnrecoverableError, type Job } from 'bullmq';
import { purgeExpiredThreads } from '../chat/threads.service';
import { refreshTableStatistics } from '../db/table-statistics';
import { purgeSuggestionData } from '../suggestions/sessions/session-retention';
import { MAINTENANCE_JOBS, type StatisticsJob } from '../queues';
import type { Services } from '../services';

/** What the purge removed: threads (`purged`), legacy messages, suggestions and suggestion sessions. */
type Purged = { purged: number; legacyMessages: number; suggestions: number; suggestionSessions: number };

/** Processes maintenance jobs: thin, the work is in the services. */
export function maintenanceProcessor(services: Pick<Services, 'prisma' | 'logger'>) {
  return async (job: Job): Promise<Purged | { analyzed: string[] }> => {
    switch (job.name) {
      // The hourly retention of what users store: conversations, and continuous suggestions' sessions and suggestions.
      case MAINTENANCE_JOBS.purgeExpiredThreads: {
        const { threads: purged, legacyMessages } = await purgeExpiredThreads(services.prisma);
        const suggestionData = await purgeSuggestionData(services.prisma);
        const result = { purged, legacyMessages, suggestions: suggestionData.suggestions, suggestionSessions: suggestionData.sessions };
        services.logger.info({ event: 'expired_threads_purged', jobId: job.id, ...result }, 'purged expired conversations and suggestions');
        return result;
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
