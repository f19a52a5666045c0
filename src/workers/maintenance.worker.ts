import { UnrecoverableError, type Job } from 'bullmq';
import { purgeExpiredThreads } from '../chat/threads.service';
import { MAINTENANCE_JOBS } from '../queues';
import type { Services } from '../services';

/** Processes maintenance jobs: thin, the work is in the services. */
export function maintenanceProcessor(services: Pick<Services, 'prisma' | 'logger'>) {
  return async (job: Job): Promise<{ purged: number }> => {
    switch (job.name) {
      case MAINTENANCE_JOBS.purgeExpiredThreads: {
        const purged = await purgeExpiredThreads(services.prisma);
        services.logger.info({ event: 'expired_threads_purged', jobId: job.id, purged }, 'purged expired conversation threads');
        return { purged };
      }
      default:
        throw new UnrecoverableError(`unknown maintenance job ${job.name}`);
    }
  };
}
