import { execFile } from 'node:child_process';
import pg from 'pg';
import { Redis } from 'ioredis';
import { ensureTemplateDatabase } from './template-database';
import { TEST_ADMIN_DATABASE_URL, TEST_REDIS_URL } from './test-env';

/** Whether the npm registry answers (tests marked describeWithNpmRegistry need it); workers inherit the variable. */
async function probeNpmRegistry(): Promise<void> {
  if (process.env.TEST_NPM_REGISTRY) return;
  const reachable = await new Promise<boolean>((resolve) => execFile('npm', ['ping'], { timeout: 10_000 }, (error) => resolve(!error)));
  process.env.TEST_NPM_REGISTRY = reachable ? 'reachable' : 'unreachable';
  if (!reachable) console.warn('\nThe npm registry does not answer: tests that need it are skipped.');
}

/** Checks PostgreSQL (with pgvector) and Redis are there, and builds the migrated template database once. */
export default async function globalSetup(): Promise<void> {
  await probeNpmRegistry();
  const admin = new pg.Client({ connectionString: TEST_ADMIN_DATABASE_URL });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(`Tests need PostgreSQL at ${TEST_ADMIN_DATABASE_URL} (set TEST_DATABASE_URL): ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    const { rows } = await admin.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
    if (rows.length === 0) throw new Error('PostgreSQL has no pgvector extension: run bash scripts/install-pgvector.sh');
    await ensureTemplateDatabase(admin);
  } finally {
    await admin.end();
  }
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(`Tests need Redis at ${TEST_REDIS_URL} (set TEST_REDIS_URL): ${(error as Error).message}`, { cause: error });
  } finally {
    redis.disconnect();
  }
}
