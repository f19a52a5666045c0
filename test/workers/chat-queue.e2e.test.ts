import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createLogger } from '../../src/logger';
import { createQueues, type ChatJob, type Queues } from '../../src/queues';
import { TEST_REDIS_URL } from '../helpers/test-env';
import { deleteRedisKeys } from '../helpers/test-service';

// aiAction's enqueue: the chat jobs asked for in one turn of the event loop go to Redis together.
describe('the chat queue: jobs enqueued together', () => {
  let redis: Redis;
  let queues: Queues;
  const prefix = `duotest-chat-queue-${process.pid}`;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    queues = createQueues({ connection: redis, prefix, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await queues.close();
    redis.disconnect();
    // Every queue's keys, not the chat queue's alone: the others leave their meta keys behind.
    await deleteRedisKeys(prefix);
  });

  const job = (overrides: Partial<ChatJob> = {}): ChatJob => ({
    requestId: randomUUID(),
    userId: 7,
    currentFile: null,
    promptRequestId: null,
    intent: 'GENERAL_QUESTION',
    ...overrides,
  });

  it('adds the jobs of one turn in one bulk, each with its own id, data and the queue’s retry options', async () => {
    const jobs = [job(), job({ intent: null }), job({ currentFile: { fileName: 'a.ts', selectedText: 'x' } })];
    const bulk = jest.spyOn(queues.chat, 'addBulk');
    try {
      await Promise.all(jobs.map((one) => queues.enqueueChat(one)));
      expect(bulk).toHaveBeenCalledTimes(1);
    } finally {
      bulk.mockRestore();
    }
    for (const one of jobs) {
      const stored = await queues.chat.getJob(one.requestId);
      expect(stored?.data).toEqual(one);
      expect(stored?.opts).toMatchObject({ attempts: 3, removeOnComplete: 1000 });
    }
  });

  it('keeps one job per request when a request is enqueued again in a group', async () => {
    const again = job();
    await queues.enqueueChat(again);
    const fresh = job();
    await Promise.all([queues.enqueueChat({ ...again, intent: 'changed' }), queues.enqueueChat(fresh)]);
    expect((await queues.chat.getJob(again.requestId))?.data.intent).toBe('GENERAL_QUESTION');
    expect(await queues.chat.getJob(fresh.requestId)).toBeDefined();
  });

  it('fails only the job that cannot be enqueued; the others of its turn are added', async () => {
    const good = [job(), job()];
    // A BigInt cannot be serialised: this job's add throws, and with it the group's bulk.
    const bad = job({ userId: 1n as unknown as number });
    const outcomes = await Promise.allSettled([good[0], bad, good[1]].map((one) => queues.enqueueChat(one)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    for (const one of good) expect(await queues.chat.getJob(one.requestId)).toBeDefined();
    expect(await queues.chat.getJob(bad.requestId)).toBeUndefined();
  });
});
