import { Router } from 'express';
import type { Services } from '../services';

type Check = { status: 'ok' | 'failed' };

/** GitLab's health endpoints: liveness says the process answers, readiness that its dependencies do. */
export function healthRoutes(services: Services): Router {
  const router = Router();
  // Unauthenticated: say whether, not why; the reason goes to the log.
  const check = async (name: string, run: () => Promise<unknown>): Promise<Check> => {
    try {
      await run();
      return { status: 'ok' };
    } catch (error) {
      services.logger.warn({ event: 'readiness_check_failed', check: name, err: error }, 'readiness check failed');
      return { status: 'failed' };
    }
  };
  router.get('/liveness', (_request, response) => {
    response.json({ status: 'ok' });
  });
  router.get('/readiness', async (_request, response) => {
    const [database, redis] = await Promise.all([
      check('database', () => services.prisma.$queryRawUnsafe('SELECT 1')),
      check('redis', () => services.redis.ping()),
    ]);
    const ready = database.status === 'ok' && redis.status === 'ok';
    response.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'failed', master_check: [{ status: ready ? 'ok' : 'failed' }], db_check: [database], redis_check: [redis] });
  });
  return router;
}
