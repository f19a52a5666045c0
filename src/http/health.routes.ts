import { Router } from 'express';
import {
  CheckFailure,
  checkDatabase,
  checkRedis,
  queuesWithoutWorkers,
  readQueues,
  runCheck,
  safeMessage,
  type Check,
} from '../metrics/instance-status';
import type { Services } from '../services';

/**
 * GitLab's health endpoints: liveness says the process answers, readiness that its dependencies
 * do, in GitLab's shape (`{status, <name>_check: [{status}]}`): the database, Redis, and workers
 * listening on every queue (without them chat answers and index runs wait for ever).
 */
export function healthRoutes(services: Services): Router {
  const router = Router();
  // Unauthenticated: say which check failed in fixed words; the error itself goes to the log.
  const logFailure = (check: string) => (error: unknown) =>
    services.logger.warn({ event: 'readiness_check_failed', check, err: error }, 'readiness check failed');
  router.get('/liveness', (_request, response) => {
    response.json({ status: 'ok' });
  });
  router.get('/readiness', async (_request, response) => {
    const { maintenance, chat, indexing } = services.queues;
    const [database, redis, workers] = await Promise.all([
      runCheck(() => checkDatabase(services.prisma), { message: 'the database did not answer', onError: logFailure('database') }),
      runCheck(() => checkRedis(services.redis), { message: 'Redis did not answer', onError: logFailure('redis') }),
      runCheck(
        async () => {
          const idle = queuesWithoutWorkers(await readQueues([maintenance, chat, indexing]));
          if (idle.length > 0) throw new CheckFailure(`no worker listens on the ${idle.join(', ')} queue${idle.length > 1 ? 's' : ''}`);
        },
        { message: safeMessage('the queues could not be read'), onError: logFailure('queue_workers') },
      ),
    ]);
    const ready = [database, redis, workers].every((check: Check) => check.status === 'ok');
    const status = ready ? 'ok' : 'failed';
    response
      .status(ready ? 200 : 503)
      .json({ status, master_check: [{ status }], db_check: [database], redis_check: [redis], queue_workers_check: [workers] });
  });
  return router;
}
