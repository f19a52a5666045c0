import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { createLogger } from '../../src/logger';
import { createQueues, QUEUE_NAMES, type IndexJob, type Queues } from '../../src/queues';
import { bullPrefix } from '../../src/redis-keys';
import { TEST_REDIS_URL } from '../helpers/test-env';
import { deleteRedisKeys } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

// Pushes folded into one index job (the debounce, or a run already active): the job that runs must
// carry what they asked, a rebuild and whether the branch still exists, not only the first one's.
describe('index requests folded into one job', () => {
  let redis: Redis;
  let queues: Queues;
  const prefix = `duotest-index-queue-${process.pid}`;
  let projectId = 1;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    queues = createQueues({ connection: redis, prefix, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await queues.close();
    redis.disconnect();
    await deleteRedisKeys(prefix);
  });

  const waitingJobs = async () => (await queues.indexing.getJobs(['waiting', 'delayed'])).map((job) => job.data);
  const push = (sha: string, extra: Partial<IndexJob> = {}): IndexJob => ({
    projectId,
    ref: 'main',
    reason: 'push',
    commitSha: sha.repeat(40),
    ...extra,
  });

  beforeEach(async () => {
    projectId += 1;
    await queues.indexing.obliterate({ force: true });
  });

  it('indexes a branch deleted and pushed again within the debounce', async () => {
    await queues.enqueueIndex(push('0', { deleted: true }), { debounceMs: 60_000 });
    await queues.enqueueIndex(push('a'), { debounceMs: 60_000 });
    expect(await waitingJobs()).toEqual([expect.objectContaining({ commitSha: 'a'.repeat(40) })]);
    expect((await waitingJobs())[0].deleted).toBeFalsy();
  });

  it('keeps a forced rebuild when a push follows it within the debounce, or with no debounce', async () => {
    await queues.enqueueIndex({ projectId, ref: 'main', reason: 'api', force: true }, { debounceMs: 60_000 });
    await queues.enqueueIndex(push('b'), { debounceMs: 60_000 });
    expect(await waitingJobs()).toEqual([expect.objectContaining({ force: true, commitSha: 'b'.repeat(40) })]);
    await queues.indexing.obliterate({ force: true });
    await queues.enqueueIndex(push('c'));
    await queues.enqueueIndex({ projectId, ref: 'main', reason: 'api', force: true });
    expect(await waitingJobs()).toEqual([expect.objectContaining({ force: true })]);
  });

  it('keeps a forced rebuild asked during a run when a push follows it: the run after has it', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const ran: IndexJob[] = [];
    const worker = new Worker(
      QUEUE_NAMES.indexing,
      async (job: Job<IndexJob>) => {
        ran.push(job.data);
        if (ran.length === 1) await released;
      },
      { connection: redis, prefix: bullPrefix(prefix) },
    );
    try {
      await queues.enqueueIndex(push('d'));
      await waitUntil(() => ran.length === 1, { what: 'the first run to start' });
      await queues.enqueueIndex({ projectId, ref: 'main', reason: 'api', force: true });
      await queues.enqueueIndex(push('e'));
      release();
      await waitUntil(() => ran.length === 2, { what: 'the run after it', timeoutMs: 15_000 });
      expect(ran[1]).toMatchObject({ force: true, commitSha: 'e'.repeat(40) });
    } finally {
      release();
      await worker.close();
    }
  });
});
