import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { THREAD_MAX_AGE_MS } from '../../src/chat/threads.service';
import { createQueues, MAINTENANCE_JOBS, QUEUE_NAMES } from '../../src/queues';
import { bullPrefix } from '../../src/redis-keys';
import { userWithToken } from '../helpers/fixtures';
import { TEST_REDIS_URL } from '../helpers/test-env';
import { startTestService, type TestService } from '../helpers/test-service';

describe('maintenance worker: purging expired conversation threads', () => {
  let service: TestService;
  let redis: Redis;

  beforeAll(async () => {
    service = await startTestService({ role: 'worker' });
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    redis.disconnect();
    await service.close();
  });

  // BullMQ leaves a connection it was handed open: each QueueEvents gets its own, closed after.
  const queueEvents = () => {
    const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    return Object.assign(new QueueEvents(QUEUE_NAMES.maintenance, { connection, prefix: bullPrefix(service.redisPrefix) }), { connection });
  };

  it('registers its schedules when workers start', async () => {
    const queues = createQueues({ connection: redis, prefix: service.redisPrefix, logger: service.running.services.logger });
    try {
      const schedulers = await queues.maintenance.getJobSchedulers();
      expect(schedulers.map((scheduler) => scheduler.key)).toEqual(
        expect.arrayContaining([MAINTENANCE_JOBS.purgeExpiredThreads, MAINTENANCE_JOBS.refreshTableStatistics]),
      );
    } finally {
      await queues.close();
    }
  });

  it('deletes threads idle for over 30 days, with their messages, through the queue', async () => {
    const user = await userWithToken(service.prisma);
    const old = await service.prisma.aiConversationThread.create({
      data: { userId: user.id, conversationType: 'duo_chat', lastUpdatedAt: new Date(Date.now() - THREAD_MAX_AGE_MS - 60_000) },
    });
    const recent = await service.prisma.aiConversationThread.create({ data: { userId: user.id, conversationType: 'duo_chat' } });
    await service.prisma.aiMessage.create({
      data: { id: crypto.randomUUID(), userId: user.id, threadId: old.id, requestId: crypto.randomUUID(), role: 'user', content: 'old' },
    });

    const queues = createQueues({ connection: redis, prefix: service.redisPrefix, logger: service.running.services.logger });
    const events = queueEvents();
    try {
      await events.waitUntilReady();
      const job = await queues.maintenance.add(MAINTENANCE_JOBS.purgeExpiredThreads, {});
      const result = await job.waitUntilFinished(events, 10_000);
      expect(result.purged).toBeGreaterThanOrEqual(1);
    } finally {
      await events.close();
      events.connection.disconnect();
      await queues.close();
    }
    expect(await service.prisma.aiConversationThread.findUnique({ where: { id: old.id } })).toBeNull();
    expect(await service.prisma.aiMessage.count({ where: { threadId: old.id } })).toBe(0);
    expect(await service.prisma.aiConversationThread.findUnique({ where: { id: recent.id } })).not.toBeNull();
  });

  it('analyzes a table that grew since it was last measured, through the queue, and only then; never a tiny one', async () => {
    const runJob = async () => {
      const queues = createQueues({ connection: redis, prefix: service.redisPrefix, logger: service.running.services.logger });
      const events = queueEvents();
      try {
        await events.waitUntilReady();
        const job = await queues.maintenance.add(MAINTENANCE_JOBS.refreshTableStatistics, {});
        return (await job.waitUntilFinished(events, 30_000)) as { analyzed: string[] };
      } finally {
        await events.close();
        events.connection.disconnect();
        await queues.close();
      }
    };
    const measured = async () =>
      (
        await service.prisma.$queryRaw<Array<{ rows: number }>>`SELECT reltuples::int AS rows FROM pg_class WHERE relname = 'ai_messages'`
      )[0].rows;
    const [{ launcher }] = await service.prisma.$queryRaw<Array<{ launcher: boolean }>>`
      SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'autovacuum launcher') AS launcher`;
    const user = await userWithToken(service.prisma);
    await service.prisma.$executeRaw`
      INSERT INTO ai_messages (id, user_id, request_id, role, content)
      SELECT gen_random_uuid(), ${user.id}, gen_random_uuid(), 'user', 'a few words' FROM generate_series(1, 20) AS n`;
    const tiny = await runJob();
    if (!launcher) {
      // Statistics taken while a table is tiny mislead the planner once it has grown: it stays unmeasured.
      expect(tiny.analyzed).not.toContain('ai_messages');
      expect(await measured()).toBeLessThan(0);
    }
    await service.prisma.$executeRaw`
      INSERT INTO ai_messages (id, user_id, request_id, role, content)
      SELECT gen_random_uuid(), ${user.id}, gen_random_uuid(), 'user', rpad('question ' || n, 300, ' and more')
      FROM generate_series(1, 3000) AS n`;
    const first = await runJob();
    if (launcher) {
      // PostgreSQL's autovacuum keeps them: nothing is done here.
      expect(first.analyzed).toEqual([]);
      return;
    }
    // This machine runs PostgreSQL without autovacuum, as the embedded database is.
    expect(first.analyzed).toContain('ai_messages');
    expect(await measured()).toBeGreaterThanOrEqual(3000);
    expect((await runJob()).analyzed).not.toContain('ai_messages');
  });

  it('fails an unknown job at once, without retries', async () => {
    const queues = createQueues({ connection: redis, prefix: service.redisPrefix, logger: service.running.services.logger });
    const events = queueEvents();
    try {
      await events.waitUntilReady();
      const job = await queues.maintenance.add('no-such-job', {}, { attempts: 3 });
      await expect(job.waitUntilFinished(events, 10_000)).rejects.toThrow(/unknown maintenance job/);
      expect((await queues.maintenance.getJob(job.id!))?.attemptsMade).toBe(1);
    } finally {
      await events.close();
      events.connection.disconnect();
      await queues.close();
    }
  });
});
