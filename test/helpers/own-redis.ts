import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './free-port';
import { waitUntil } from './wait';

/**
 * A redis-server of a test file's own, so it can stop answering (SIGSTOP: its connections stay open, its replies
 * stop) without touching the one every other test uses.
 */
export type OwnRedis = {
  url: string;
  pause(): void;
  resume(): void;
  /** Kills the server: its connections drop and nothing answers on its port. */
  kill(): Promise<void>;
  /** Starts a new server, with nothing in it, on the port of the killed one. */
  start(): Promise<void>;
  stop(): void;
};

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const start = () =>
    spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const answers = () =>
    waitUntil(
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
  let child = start();
  await answers();
  return {
    url,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    kill: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    start: async () => {
      child = start();
      await answers();
    },
    stop: () => {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    },
  };
}
