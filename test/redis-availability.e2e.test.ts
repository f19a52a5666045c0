import { createLogger } from '../src/logger';
import { FailFastRedis, isRedisUnavailable } from '../src/redis-availability';
import { startOwnRedis, type OwnRedis } from './helpers/own-redis';
import { waitUntil } from './helpers/wait';

// The request path's connection against a real redis-server that stops answering (SIGSTOP) and comes back.
describe('FailFastRedis', () => {
  let redis: OwnRedis;
  let connection: FailFastRedis;
  const changes: boolean[] = [];
  let refusals = 0;

  beforeAll(async () => {
    redis = await startOwnRedis();
    connection = new FailFastRedis(
      redis.url,
      { maxRetriesPerRequest: 1, enableReadyCheck: true, commandTimeout: 300 },
      {
        probeIntervalMs: 50,
        logger: createLogger('silent'),
        onChange: (answering) => changes.push(answering),
        onRefused: () => (refusals += 1),
      },
    );
    connection.on('error', () => undefined);
    await connection.ping();
  });
  afterAll(async () => {
    redis?.resume();
    connection?.disconnect();
    redis?.stop();
  });

  it('waits out one timeout, then fails every command at once as unavailable until a PING answers again', async () => {
    await connection.set('k', 'before');
    redis.pause();
    try {
      // The first command waits for its reply until the command timeout.
      const first = await connection.get('k').catch((error: unknown) => error);
      expect(isRedisUnavailable(first)).toBe(true);
      expect(connection.answering).toBe(false);
      expect(changes).toEqual([false]);
      // The next ones are not sent at all: refused, with an error the request path reads as "Redis unavailable".
      const next = await Promise.all(
        [connection.get('k'), connection.incr('n'), connection.evalsha('0'.repeat(40), 0)].map((c) => c.catch((e: unknown) => e)),
      );
      expect(next.every(isRedisUnavailable)).toBe(true);
      expect(refusals).toBe(3);
    } finally {
      redis.resume();
    }
    await waitUntil(async () => connection.answering, { what: 'a PING to answer', timeoutMs: 5_000, intervalMs: 20 });
    expect(changes).toEqual([false, true]);
    expect(await connection.get('k')).toBe('before');
    expect(refusals).toBe(3);
  });

  it('refuses a pipeline and a transaction whole while Redis is not answering: they settle with unavailable errors', async () => {
    redis.pause();
    try {
      await connection.get('k').catch(() => undefined);
      expect(connection.answering).toBe(false);
      const refusedBefore = refusals;
      const results = await connection.pipeline().set('p', '1').get('p').exec();
      expect(results!.map(([error]) => isRedisUnavailable(error))).toEqual([true, true]);
      const transaction = await connection
        .multi()
        .incr('t')
        .exec()
        .catch((error: unknown) => error);
      expect(isRedisUnavailable(transaction)).toBe(true);
      // Two pipelined commands, then MULTI, INCR and EXEC.
      expect(refusals).toBe(refusedBefore + 5);
    } finally {
      redis.resume();
    }
    await waitUntil(async () => connection.answering, { what: 'a PING to answer', timeoutMs: 5_000, intervalMs: 20 });
    expect(await connection.pipeline().set('p', '2').get('p').exec()).toEqual([
      [null, 'OK'],
      [null, '2'],
    ]);
  });

  it('comes back after Redis was down and a new one started: the reconnection goes through', async () => {
    await redis.kill();
    // Down: the first command fails after the reconnection attempt, the next at once.
    expect(isRedisUnavailable(await connection.get('k').catch((error: unknown) => error))).toBe(true);
    expect(connection.answering).toBe(false);
    const refusedBefore = refusals;
    expect(isRedisUnavailable(await connection.get('k').catch((error: unknown) => error))).toBe(true);
    expect(refusals).toBe(refusedBefore + 1);
    await redis.start();
    await waitUntil(async () => connection.answering, { what: 'the reconnection to answer', timeoutMs: 10_000, intervalMs: 20 });
    expect(changes.slice(-2)).toEqual([false, true]);
    expect(await connection.set('k', 'after')).toBe('OK');
  });
});
