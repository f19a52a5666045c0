import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './free-port';
import { waitUntil } from './wait';

/**
 * A redis-server of a test file's own, so it can stop answering (SIGSTOP: its connections stay open, its replies
 * stop) without touching the one every other test uses.
 */
export type OwnRedis = { url: string; pause(): void; resume(): void; stop(): void };

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  await waitUntil(
    async () => {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      const answered = await probe.ping().then(
        () => true,
        () => false,
      );
      probe.disconnect();
      return answered;
    },
    { what: 'redis-server to answer', timeoutMs: 10_000, intervalMs: 50 },
  );
  return {
    url,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    stop: () => {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    },
  };
}
