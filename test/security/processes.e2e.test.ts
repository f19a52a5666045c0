import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { PROJECT_ROOT } from '../../src/paths';
import { prefixClaimKey } from '../../src/redis-prefix-claim';
import { runCli } from '../helpers/run-cli';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database';
import { TEST_REDIS_URL } from '../helpers/test-env';
import { deleteRedisKeys, startTestService, type TestService } from '../helpers/test-service';

type ServiceProcess = { child: ChildProcess; output: () => string; exited: Promise<number | null> };

/** `src/main.ts` as a process of its own, as an operator starts it. */
function startProcess(env: Record<string, string>, role = 'all'): ServiceProcess {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', path.join('src', 'main.ts'), `--role=${role}`], {
    cwd: PROJECT_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DEMO_SEED: 'false',
      REDIS_URL: TEST_REDIS_URL,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function stop(service: ServiceProcess): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGTERM');
  const timer = setTimeout(() => service.child.kill('SIGKILL'), 20_000);
  await service.exited;
  clearTimeout(timer);
}

async function eventually<T>(probe: () => T | null | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${probe.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// Threat: lost work and shared state between processes: two instances behind one Redis prefix
// taking each other's jobs, three processes racing for one embedded database, and the embedded
// database's socket open to anyone on the machine.
describe('processes: one prefix per database, one owner per DATA_DIR, an owner-only socket', () => {
  jest.setTimeout(180_000);

  describe('REDIS_PREFIX guard (case 14)', () => {
    let service: TestService;
    let other: TestDatabase;
    beforeAll(async () => {
      service = await startTestService({ role: 'all' });
      other = await createTestDatabase();
    });
    afterAll(async () => {
      await service.close();
      await other.drop();
    });

    it('a second instance on another database behind the same prefix refuses to start, naming REDIS_PREFIX', async () => {
      const second = startProcess({ DATABASE_URL: other.url, REDIS_PREFIX: service.redisPrefix });
      const code = await second.exited;
      expect(code).toBe(1);
      expect(second.output()).toContain('REDIS_PREFIX');
      expect(second.output()).toContain(service.redisPrefix);
      // It took nothing: the claim is still the first instance's.
      const redis = new Redis(TEST_REDIS_URL);
      const identity = await service.prisma.serviceIdentity.findUniqueOrThrow({ where: { id: 1 } });
      expect(await redis.get(prefixClaimKey(service.redisPrefix))).toBe(identity.databaseId);
      redis.disconnect();
    });

    it('a worker process on the same database shares the prefix (API and workers apart)', async () => {
      const databaseUrl = service.running.services.config.databaseUrl!;
      const worker = startProcess({ DATABASE_URL: databaseUrl, REDIS_PREFIX: service.redisPrefix, LOG_LEVEL: 'info' }, 'worker');
      const outcome = await eventually(
        () => (worker.child.exitCode !== null ? 'exited' : worker.output().includes('"workers_started"') ? 'started' : null),
        120_000,
      );
      expect(outcome).toBe('started');
      await stop(worker);
    });

    it('a chat job this database does not know fails visibly (kept in the failed set with the reason), never silently', async () => {
      const requestId = randomUUID();
      await service.running.services.queues.enqueueChat({ requestId, userId: 1 });
      const job = await eventually(() => {
        void service.running.services.queues.chat.getJob(requestId).then((found) => (latest = found ?? null));
        return latest?.failedReason ? latest : null;
      }, 20_000);
      expect(job.failedReason).toContain('REDIS_PREFIX');
      expect(await job.getState()).toBe('failed');
    });
    let latest: Awaited<ReturnType<TestService['running']['services']['queues']['chat']['getJob']>> | null = null;
  });

  describe('embedded DATA_DIR (cases 15 and 7)', () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-race-'));
    const prefixes = [0, 1, 2].map(() => `duotest:${randomUUID().slice(0, 8)}`);
    let processes: ServiceProcess[] = [];
    afterAll(async () => {
      await Promise.all(processes.map(stop));
      await Promise.all(prefixes.map(deleteRedisKeys));
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('three processes started at once on an empty DATA_DIR: exactly one gets past the lock', async () => {
      processes = prefixes.map((prefix) => startProcess({ DATA_DIR: dataDir, REDIS_PREFIX: prefix }, 'api'));
      // The two losers stop at the lock, long before the winner has opened the database.
      const losers = await eventually(() => {
        const done = processes.filter((process) => process.child.exitCode !== null);
        return done.length >= 2 ? done : null;
      }, 120_000);
      expect(losers).toHaveLength(2);
      for (const loser of losers) {
        expect(loser.child.exitCode).toBe(1);
        expect(loser.output()).toContain('is in use');
      }
      const winner = processes.find((process) => !losers.includes(process))!;
      expect(winner.child.exitCode).toBeNull();
      const lock = JSON.parse(readFileSync(path.join(dataDir, 'pglite.lock'), 'utf8')) as { pid: number };
      expect(lock.pid).toBe(winner.child.pid);
    });

    it("the owner's socket is a Unix socket only its user may reach, and admin commands work through it", async () => {
      const lock = await eventually(() => {
        const parsed = JSON.parse(readFileSync(path.join(dataDir, 'pglite.lock'), 'utf8')) as { socketPath: string | null };
        return parsed.socketPath ? parsed : null;
      }, 150_000);
      const socketPath = lock.socketPath!;
      expect(statSync(path.dirname(socketPath)).mode & 0o777).toBe(0o700);
      expect(statSync(socketPath).mode & 0o077).toBe(0);
      expect(statSync(socketPath).uid).toBe(process.getuid!());
      // No TCP port: the old loopback port scheme is gone from the lock.
      expect(lock).not.toHaveProperty('socketPort');
      // It speaks PostgreSQL for its owner (the admin command) ...
      const created = await runCli('admin', ['create-user', '--username', 'dora', '--email', 'dora@example.com'], { DATA_DIR: dataDir });
      expect(created.code).toBe(0);
      expect(JSON.parse(created.stdout)).toMatchObject({ username: 'dora' });
      // ... and the socket is a real endpoint that accepts connections (permissions do the refusing for other users).
      await new Promise<void>((resolve, reject) =>
        net
          .connect(socketPath)
          .once('connect', function (this: net.Socket) {
            this.destroy();
            resolve();
          })
          .once('error', reject),
      );
    });
  });
});
