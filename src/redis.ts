import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { AppError } from './errors';
import { FailFastRedis, type FailFastOptions } from './redis-availability';
import type { Logger } from './logger';

export type RedisConnectionOptions = {
  /** BullMQ workers need null: a blocked command must wait, not fail. Default 20. */
  maxRetriesPerRequest?: number | null;
  /** A command without a reply after this long (ms) fails. Default: none. */
  commandTimeoutMs?: number;
  /** Once a command goes unanswered, fail every command at once until a PING answers (FailFastRedis). */
  failFast?: Omit<FailFastOptions, 'logger'>;
};

/**
 * The request path's connection: while Redis is down or hung, a command fails within about two seconds
 * (after one reconnection attempt, or when its reply is late) instead of waiting for Redis to come back, so a
 * request that needs Redis gets an error and one that can do without it (the rate limit) goes on. After the
 * first such failure the connection fails at once (FailFastRedis), PINGing every half second until Redis answers.
 */
export const REQUEST_REDIS_OPTIONS: Omit<RedisConnectionOptions, 'failFast'> = { maxRetriesPerRequest: 1, commandTimeoutMs: 2_000 };

export function connectRedis(url: string, logger: Logger, options: RedisConnectionOptions = {}): Redis {
  const settings = {
    maxRetriesPerRequest: options.maxRetriesPerRequest === undefined ? 20 : options.maxRetriesPerRequest,
    enableReadyCheck: true,
    ...(options.commandTimeoutMs === undefined ? {} : { commandTimeout: options.commandTimeoutMs }),
  };
  const redis = options.failFast ? new FailFastRedis(url, settings, { ...options.failFast, logger }) : new Redis(url, settings);
  redis.on('error', (error) => logger.warn({ event: 'redis_error', err: error }, 'redis connection error'));
  return redis;
}

async function answers(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1500 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

export type RedisSupervisor = { url: string; child: ChildProcess | null; stop(): Promise<void> };

export type EnsureRedisOptions = { url: string; dataDir: string; logger: Logger };

/**
 * Makes sure a Redis answers at `url`. If none does, the URL points at this machine and
 * `redis-server` is installed, starts one as a child process with its data under dataDir.
 */
export async function ensureRedis(options: EnsureRedisOptions): Promise<RedisSupervisor> {
  if (await answers(options.url)) return { url: options.url, child: null, stop: async () => undefined };
  const target = new URL(options.url);
  const local = ['127.0.0.1', 'localhost', '[::1]'].includes(target.hostname);
  const installed = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!local || !installed) {
    throw new AppError({
      code: 'INTERNAL',
      userMessage:
        `Nothing answers at REDIS_URL (${target.host}). ` +
        `${local ? 'Install Redis (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) and start again, or' : ''} ` +
        `set REDIS_URL to a running Redis.`,
    });
  }
  const directory = path.join(options.dataDir, 'redis');
  mkdirSync(directory, { recursive: true });
  const port = target.port || '6379';
  const child = spawn(
    'redis-server',
    ['--port', port, '--bind', '127.0.0.1', '--dir', directory, '--save', '60 1', '--appendonly', 'no', '--daemonize', 'no'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  options.logger.info({ event: 'redis_started', port, directory, pid: child.pid }, 'started redis-server as a child process');
  for (let attempt = 0; attempt < 50; attempt += 1) {
    if (await answers(options.url)) {
      return {
        url: options.url,
        child,
        stop: () =>
          new Promise((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      };
    }
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new AppError({ code: 'INTERNAL', userMessage: `redis-server did not start on port ${port}; see its output above` });
}
