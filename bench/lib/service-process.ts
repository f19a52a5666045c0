/**
 * The service in a process of its own (`src/main.ts --role=…`, as `npm start` runs it), so a
 * bench's clients and stub model do not share its CPU and its CPU time can be read on its own (by
 * pid, see cpuMs). With BENCH_CPU_PROF=<dir> the process writes a V8 CPU profile there when it
 * stops (`node --cpu-prof`).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../../src/db/database';
import type { PrismaClient } from '../../src/db/prisma';
import { createLogger } from '../../src/logger';
import { createTestDatabase } from '../../test/helpers/test-database';
import { TEST_REDIS_URL } from '../../test/helpers/test-env';
import { deleteRedisKeys } from '../../test/helpers/test-service';
import type { Role } from '../../src/start-service';
import { PROJECT_ROOT } from '../../src/paths';
import { within } from './figures';

export type ServiceProcess = {
  /** The HTTP base URL; null for the worker role (it serves no HTTP). */
  url: string | null;
  pid: number;
  close(): Promise<void>;
};

const STARTED = /GraphQL playground: (\S+)\/api\/graphql/;

export async function startServiceProcess(role: Role, env: Record<string, string>, timeoutMs = 120_000): Promise<ServiceProcess> {
  const profileDir = process.env.BENCH_CPU_PROF;
  const child = spawn(
    process.execPath,
    [
      '-r',
      '@swc-node/register',
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      path.join('src', 'main.ts'),
      `--role=${role}`,
    ],
    { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  const url =
    role === 'worker'
      ? null
      : await within(
          new Promise<string>((resolve, reject) => {
            child.stdout.on('data', (data: Buffer) => {
              output += data.toString('utf8');
              const match = STARTED.exec(output);
              if (match) resolve(match[1]);
            });
            void exited.then((code) => reject(new Error(`the ${role} process exited with ${code} before serving:\n${output}`)));
          }),
          timeoutMs,
          `the ${role} process did not start`,
        );
  child.stdout.resume();
  return {
    url,
    pid: child.pid!,
    close: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await within(exited, 30_000, `the ${role} process did not stop`);
    },
  };
}

/** An API process (`--role=api`) with a database and a Redis prefix of its own, and a client of that database for the bench's fixtures. */
export type BenchApi = { url: string; pid: number; prisma: PrismaClient; close(): Promise<void> };

export type BenchApiOptions = {
  /** The URL the service reaches its database by (a proxy's, say), made from the database's own. */
  databaseUrl?: (direct: string) => Promise<string>;
};

/**
 * Starts the API on a new test database and prefix, quiet and without demo data, with `env` on top;
 * `close` stops it and removes the database, the Redis keys and the data directory.
 */
export async function startBenchApi(name: string, env: Record<string, string>, options: BenchApiOptions = {}): Promise<BenchApi> {
  const database = await createTestDatabase();
  const redisPrefix = `duobench:${randomBytes(5).toString('hex')}`;
  const dataDir = `/tmp/duo-bench-${name}-${process.pid}`;
  const removeAll = async () => {
    await database.drop();
    await deleteRedisKeys(redisPrefix);
    rmSync(dataDir, { recursive: true, force: true });
  };
  let service: ServiceProcess;
  try {
    service = await startServiceProcess('api', {
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: options.databaseUrl ? await options.databaseUrl(database.url) : database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      LOG_LEVEL: 'error',
      DEMO_SEED: 'false',
      ...env,
    });
  } catch (error) {
    await removeAll();
    throw error;
  }
  const fixtures = await openDatabase({ databaseUrl: database.url, dataDir, logger: createLogger('error'), embeddedRole: 'client' });
  return {
    url: service.url!,
    pid: service.pid,
    prisma: fixtures.prisma,
    close: async () => {
      await service.close();
      await fixtures.close();
      await removeAll();
    },
  };
}
