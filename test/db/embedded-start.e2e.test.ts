import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';
import { unique } from '../helpers/fixtures';
import { TEST_REDIS_URL } from '../helpers/test-env';
import { deleteRedisKeys } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

type Started = { child: ChildProcessWithoutNullStreams; output: () => string; exited: Promise<number | NodeJS.Signals | null> };

// The service as `npm start` runs it, on the embedded database: its own process, real signals.
function startMain(env: Record<string, string>): Started {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', path.join('src', 'main.ts')], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', DEMO_SEED: 'false', PORT: '0', ...env },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  return { child, output: () => output, exited };
}

/** Starts the service and stops it (SIGTERM) once it runs; fails with its output if it exits instead. */
async function startAndStop(env: Record<string, string>): Promise<string> {
  const started = startMain(env);
  let code: number | NodeJS.Signals | null | undefined;
  void started.exited.then((exitCode) => (code = exitCode));
  try {
    await waitUntil(() => started.output().includes('duo-slice is running') || code !== undefined, {
      what: 'the service to start',
      timeoutMs: 45_000,
      intervalMs: 50,
    });
    expect({ running: started.output().includes('duo-slice is running'), output: started.output() }).toMatchObject({ running: true });
    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
    return started.output();
  } finally {
    started.child.kill('SIGKILL');
  }
}

const logEvents = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { event: string; err?: { message: string; stack: string; postgresLog: string[] } });

// A start interrupted while it makes the embedded database (a supervisor's SIGKILL, `timeout`) must not
// leave a directory that no later start opens; one that cannot be opened says why and what to do.
describe('starting on the embedded database', () => {
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-embedded-start-'));
    env = { DATA_DIR: dataDir, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: unique('duotest:embstart') };
  });
  afterAll(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await deleteRedisKeys(env.REDIS_PREFIX);
  });

  it('killed while it writes a new database, leaves no half-made pgdata, and the next start makes it whole', async () => {
    const pgdata = path.join(dataDir, 'pgdata');
    const started = startMain(env);
    // The moment the database's files start to appear on disk (PGlite writes the initialised directory
    // file by file): where a kill once left a pgdata with PG_VERSION but no postgresql.conf, which no start opened again.
    const writing = () =>
      readdirSync(dataDir).some((entry) => entry.startsWith('pgdata') && readdirSync(path.join(dataDir, entry)).length > 0);
    try {
      await waitUntil(writing, { what: 'the new database to be written', timeoutMs: 45_000, intervalMs: 2 });
      started.child.kill('SIGKILL');
    } finally {
      started.child.kill('SIGKILL');
    }
    expect(await started.exited).toBe('SIGKILL');
    // pgdata is absent or whole, never in between.
    if (existsSync(pgdata)) expect(readdirSync(pgdata)).toEqual(expect.arrayContaining(['PG_VERSION', 'postgresql.conf', 'pg_hba.conf']));

    const output = await startAndStop(env);
    expect(logEvents(output).map((line) => line.event)).toContain('migrations_checked');
    expect(readFileSync(path.join(pgdata, 'PG_VERSION'), 'utf8').trim()).toMatch(/^\d+$/);
    // What the interrupted start left beside it is gone.
    expect(readdirSync(dataDir).filter((entry) => entry.startsWith('pgdata'))).toEqual(['pgdata']);
  }, 60_000);

  it('names the directory, says what to do and logs why when the database cannot be opened, and leaves it as it is', async () => {
    const damagedDir = mkdtempSync(path.join(os.tmpdir(), 'duo-embedded-damaged-'));
    try {
      // A database the service has made and used, then its control file overwritten.
      await startAndStop({ ...env, DATA_DIR: damagedDir });
      const control = path.join(damagedDir, 'pgdata', 'global', 'pg_control');
      writeFileSync(control, Buffer.alloc(readFileSync(control).length, 7));
      const before = readdirSync(path.join(damagedDir, 'pgdata')).sort();

      const started = startMain({ ...env, DATA_DIR: damagedDir });
      expect(await started.exited).toBe(1);
      const output = started.output();
      const pgdata = path.join(damagedDir, 'pgdata');
      expect(output).toContain(
        `duo-slice could not start: Cannot open the embedded database in ${pgdata}: database files are incompatible with server. `,
      );
      expect(output).toContain('If no service has ever run on it, move it aside and start again');
      const failure = logEvents(output).find((line) => line.event === 'embedded_database_open_failed');
      expect(failure?.err?.message).toBe('PGlite failed to initialize properly');
      expect(failure?.err?.stack).toContain('pglite.thread');
      // PostgreSQL's own reason, which PGlite's message leaves out.
      expect(failure?.err?.postgresLog.join('\n')).toMatch(/FATAL: +database files are incompatible with server/);
      // Neither deleted nor made again.
      expect(readdirSync(pgdata).sort()).toEqual(before);
      expect(readFileSync(control)).toEqual(Buffer.alloc(readFileSync(control).length, 7));
      expect(readdirSync(damagedDir).filter((entry) => entry.startsWith('pgdata'))).toEqual(['pgdata']);
    } finally {
      rmSync(damagedDir, { recursive: true, force: true });
    }
  }, 60_000);
});
