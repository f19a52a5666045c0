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

  it('registers its hourly schedule when workers start', async () => {
    const queues = createQueues({ connection: redis, prefix: service.redisPrefix, logger: service.running.services.logger });
    try {
      const schedulers = await queues.maintenance.getJobSchedulers();
      expect(schedulers.map((scheduler) => scheduler.key)).toContain(MAINTENANCE_JOBS.purgeExpiredThreads);
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
