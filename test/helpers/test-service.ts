import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config';
import type { PrismaClient } from '../../src/db/prisma';
import { createLogger } from '../../src/logger';
import { startService, type Role, type RunningService } from '../../src/start-service';
import { createTestDatabase, type TestDatabase } from './test-database';
import { TEST_REDIS_URL } from './test-env';

export type GraphQLResponse<Data = Record<string, unknown>> = {
  status: number;
  body: { data?: Data | null; errors?: Array<{ message: string; extensions?: Record<string, unknown>; path?: unknown[] }> };
};

export type TestService = {
  url: string;
  prisma: PrismaClient;
  running: RunningService;
  redisPrefix: string;
  /** POST /api/graphql with an optional bearer token. */
  graphql<Data = Record<string, unknown>>(
    query: string,
    options?: { variables?: Record<string, unknown>; token?: string },
  ): Promise<GraphQLResponse<Data>>;
  close(): Promise<void>;
};

export type TestServiceOptions = {
  /** Extra environment for loadConfig (e.g. RATE_LIMIT_PER_MINUTE). */
  env?: Record<string, string>;
  role?: Role;
  /** Use the embedded PGlite database in a temporary DATA_DIR instead of PostgreSQL. */
  embedded?: boolean;
};

/** Starts the real service (composition root, HTTP on a free port) on a database and Redis prefix of its own. */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  // A database of its own unless the test names one (a second process's role on the first one's database).
  const database: TestDatabase | null = options.embedded || options.env?.DATABASE_URL ? null : await createTestDatabase();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-test-'));
  const redisPrefix = `duotest:${randomBytes(5).toString('hex')}`;
  const leftovers = async () => {
    await database?.drop();
    await deleteRedisKeys(redisPrefix);
    rmSync(dataDir, { recursive: true, force: true });
  };
  let running: RunningService;
  try {
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      DEMO_SEED: 'false',
      ...(database ? { DATABASE_URL: database.url } : {}),
      ...options.env,
    });
    running = await startService({ config, logger: createLogger(config.logLevel), role: options.role ?? 'api' });
  } catch (error) {
    // A start that fails leaves no database, Redis key or folder behind either: the test fails, the machine stays clean.
    await leftovers();
    throw error;
  }
  const url = running.url ?? '';
  return {
    url,
    prisma: running.services.prisma,
    running,
    redisPrefix,
    graphql: async (query, requestOptions = {}) => {
      const response = await fetch(`${url}/api/graphql`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(requestOptions.token ? { authorization: `Bearer ${requestOptions.token}` } : {}),
        },
        body: JSON.stringify({ query, variables: requestOptions.variables }),
      });
      return { status: response.status, body: (await response.json()) as GraphQLResponse['body'] } as never;
    },
    close: async () => {
      try {
        await running.close();
      } finally {
        await leftovers();
      }
    },
  };
}

/** Removes every Redis key a test file made under its prefix. */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
