import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import net from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths';
import { freePort } from './helpers/free-port';
import { createTestDatabase, type TestDatabase } from './helpers/test-database';
import { TEST_REDIS_URL } from './helpers/test-env';
import { deleteRedisKeys } from './helpers/test-service';
import { waitUntil } from './helpers/wait';

type Started = { child: ChildProcessWithoutNullStreams; output: () => string; exited: Promise<number | null> };

/** `src/main.ts` with `args` (a role), optionally under `nice -n <startNice>` as an operator may start it. */
function startMain(env: Record<string, string>, args: string[] = [], startNice?: number): Started {
  const command = [process.execPath, '-r', '@swc-node/register', path.join('src', 'main.ts'), ...args];
  const [file, ...rest] = startNice === undefined ? command : ['nice', '-n', String(startNice), ...command];
  const child = spawn(file, rest, {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', ...env },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** The nice value of each thread of a process (Linux: /proc/<pid>/task/<tid>/stat, field 19). */
function threadNiceValues(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((thread) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}

// Generous: under a full parallel test run, compiling the service on the fly takes a while.
async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 45_000): Promise<void> {
  await waitUntil(check, { what, timeoutMs, intervalMs: 100 });
}

// The service as `npm start` runs it: its own process, real signals.
describe('src/main.ts', () => {
  let database: TestDatabase;
  let dataDir: string;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-main-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));
  /** The settings of a service on the test's database and Redis, on `port` (and a Redis prefix of its own). */
  const onTestServices = (port: number) => ({
    PORT: String(port),
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: `duotest:main${port}`,
  });

  it('stops on a bad setting with a message naming the variable', async () => {
    const started = startMain({ PORT: 'eighty', DATA_DIR: dataDir });
    expect(await started.exited).toBe(2);
    expect(started.output()).toMatch(/PORT: must be a number/);
  });

  it('prints its usage for --help and refuses an argument it does not know, without starting', async () => {
    const help = startMain({ DATA_DIR: dataDir }, ['--help']);
    expect(await help.exited).toBe(0);
    expect(help.output()).toContain('--role=worker');
    expect(help.output()).not.toContain('duo-slice is running');
    const typo = startMain({ DATA_DIR: dataDir }, ['--rol=api']);
    expect(await typo.exited).toBe(2);
    expect(typo.output()).toMatch(/^Unknown argument: --rol=api/);
    const spaced = startMain({ DATA_DIR: dataDir }, ['--role', 'gateway']);
    expect(await spaced.exited).toBe(2);
    expect(spaced.output()).toMatch(/^Unknown --role=gateway/);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('names the address and PORT when its port is taken', async () => {
    const port = await freePort();
    const taken = net.createServer().listen(port, '127.0.0.1');
    await new Promise((resolve) => taken.once('listening', resolve));
    const settings = onTestServices(port);
    try {
      const started = startMain(settings);
      expect(await started.exited).toBe(1);
      expect(started.output()).toContain(
        `duo-slice could not start: 127.0.0.1:${port} is already in use: stop what listens there, or set PORT`,
      );
    } finally {
      taken.close();
      await deleteRedisKeys(settings.REDIS_PREFIX);
    }
  }, 70_000);

  it('serves, then shuts down in order on SIGTERM and exits 0', async () => {
    const port = await freePort();
    const settings = onTestServices(port);
    const started = startMain(settings);
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/-/readiness`).catch(() => null))?.status === 200, 'readiness');
      // The banner follows readiness (workers start in between), so wait for it rather than race it.
      await waitFor(
        () => started.output().includes(`GraphQL playground: http://127.0.0.1:${port}/api/graphql`),
        'the start banner',
        10_000,
      );
      expect(started.output()).toContain(`Duo Chat: http://127.0.0.1:${port}/-/duo-chat`);
      started.child.kill('SIGTERM');
      expect(await started.exited).toBe(0);
      const events = started
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line).event);
      expect(events.at(-1)).toBe('shutdown_complete');
      expect(events.indexOf('shutdown_started')).toBeGreaterThan(events.indexOf('http_listening'));
    } finally {
      started.child.kill('SIGKILL');
      await deleteRedisKeys(settings.REDIS_PREFIX);
    }
  }, 70_000);

  it('starts redis-server as a child, with its data under DATA_DIR, when nothing answers at REDIS_URL', async () => {
    const port = await freePort();
    const redisPort = await freePort();
    const started = startMain({
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    });
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/-/readiness`).catch(() => null))?.status === 200, 'readiness');
      expect(started.output()).toContain('"event":"redis_started"');
      expect(existsSync(path.join(dataDir, 'redis'))).toBe(true);
      started.child.kill('SIGINT');
      expect(await started.exited).toBe(0);
      // The child Redis went with it.
      await waitFor(async () => (await fetch(`http://127.0.0.1:${redisPort}`).catch(() => null)) === null, 'redis-server to stop', 5000);
    } finally {
      started.child.kill('SIGKILL');
    }
  }, 70_000);

  it('stops with install instructions when nothing answers at REDIS_URL and redis-server is not installed', async () => {
    const redisPort = await freePort();
    // A PATH with node and nothing else: no redis-server to start.
    const bin = path.join(dataDir, 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, path.join(bin, 'node'));
    const started = startMain({
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      PORT: '0',
      PATH: bin,
    });
    const timer = setTimeout(() => started.child.kill('SIGKILL'), 15_000);
    expect(await started.exited).toBe(1);
    clearTimeout(timer);
    expect(started.output()).toMatch(
      /Nothing answers at REDIS_URL \(127\.0\.0\.1:\d+\)\. Install Redis \(Debian\/Ubuntu: apt-get install redis-server/,
    );
  }, 20_000);

  describe('CPU priority of a worker-only process (WORKER_NICE)', () => {
    const ownNice = os.getPriority();
    const started: Started[] = [];
    const prefix = `duotest:nice${process.pid}`;
    const start = (role: string, startNice?: number) => {
      const service = startMain(
        { DATA_DIR: dataDir, DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, PORT: '0', WORKER_NICE: '7' },
        [`--role=${role}`],
        startNice,
      );
      started.push(service);
      return service;
    };
    const ready = (service: Started, event: string) => waitFor(() => service.output().includes(`"event":"${event}"`), event);
    afterEach(async () => {
      for (const service of started.splice(0)) {
        service.child.kill('SIGKILL');
        await service.exited;
      }
      await deleteRedisKeys(prefix);
    });

    it('runs every thread of a worker at WORKER_NICE, so the API beside it is served first; the API keeps its priority', async () => {
      const [api, worker] = [start('api'), start('worker')];
      await Promise.all([ready(api, 'http_listening'), ready(worker, 'workers_started')]);
      expect(worker.output()).toContain('"event":"cpu_priority_lowered"');
      const workerThreads = threadNiceValues(worker.child.pid!);
      expect(workerThreads.length).toBeGreaterThan(3); // the main thread, libuv's and V8's
      expect(new Set(workerThreads)).toEqual(new Set([Math.max(7, ownNice)]));
      expect(new Set(threadNiceValues(api.child.pid!))).toEqual(new Set([ownNice]));
      expect(api.output()).not.toContain('cpu_priority_lowered');
    }, 70_000);

    it('leaves a worker started nicer than WORKER_NICE as it was', async () => {
      const worker = start('worker', 12); // `nice -n 12` adds to the nice value this test runs at
      await ready(worker, 'workers_started');
      expect(new Set(threadNiceValues(worker.child.pid!))).toEqual(new Set([Math.min(19, ownNice + 12)]));
    }, 70_000);
  });
});
