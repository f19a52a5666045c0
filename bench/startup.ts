/**
 * Start-up time and idle memory of the service, on the embedded default and on PostgreSQL.
 * Prints figures (medians over several runs); it never passes or fails on time.
 *
 *   node -r @swc-node/register bench/startup.ts [runs=3]
 *
 * Measures the service as `npm start` runs it, `scripts/run-service.sh` (node dist/src/main.js with
 * MALLOC_ARENA_MAX=2 unless the environment sets it; run `npm run build` first): the time from spawn until
 * /-/readiness answers 200, for a first start (empty data directory: initdb, migrations, demo
 * data) and a restart; then the process's RSS after 5 s idle, and its peak RSS (VmHWM).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { PROJECT_ROOT } from '../src/paths';
import { deleteRedisKeys } from '../test/helpers/test-service';
import { machineLoad, median, QUICK, reportFigures, runBench } from './lib/figures';

const RUNS = Number(process.argv[2] ?? (QUICK ? 1 : 3));
const MAIN = path.join(PROJECT_ROOT, 'dist', 'src', 'main.js');
// The script execs node, so the child's pid is the service's own (its /proc status is read below).
const RUN_SERVICE = path.join(PROJECT_ROOT, 'scripts', 'run-service.sh');
// A random high port: other benches and services may run on this machine.
const PORT = 20_000 + Math.floor(Math.random() * 40_000);
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

type Sample = { readyMs: number; idleRssMb: number; peakRssMb: number };

const memory = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function startOnce(env: Record<string, string>, port: number): Promise<Sample> {
  const started = performance.now();
  const child = spawn('sh', [RUN_SERVICE], {
    env: { ...process.env, LOG_LEVEL: 'warn', PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // The end of what the service wrote to stderr: why it stopped, if it does.
  let stderr = '';
  child.stderr.on('data', (data: Buffer) => (stderr = (stderr + data.toString('utf8')).slice(-2000)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      const response = await fetch(`http://127.0.0.1:${port}/-/readiness`).catch(() => null);
      if (response?.status === 200) break;
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`the service stopped (${child.exitCode ?? child.signalCode}) before it was ready:\n${stderr.trim()}`);
      if (performance.now() - started > 180_000) throw new Error('the service was not ready within 180 s');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const readyMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 5000));
    return { readyMs, idleRssMb: memory(child.pid!, 'VmRSS'), peakRssMb: memory(child.pid!, 'VmHWM') };
  } finally {
    // Listened for since the spawn: a service that stopped by itself has emitted 'exit' already.
    child.kill('SIGTERM');
    await exited;
  }
}

function report(name: string, samples: Sample[]): void {
  const line = (label: string, values: number[], unit: string) =>
    `  ${label.padEnd(14)} median ${median(values).toFixed(0).padStart(6)} ${unit}   (runs: ` +
    `${values.map((value) => value.toFixed(0)).join(', ')})`;
  console.log(`${name}`);
  console.log(
    line(
      'ready after',
      samples.map((sample) => sample.readyMs),
      'ms',
    ),
  );
  console.log(
    line(
      'idle RSS',
      samples.map((sample) => sample.idleRssMb),
      'MiB',
    ),
  );
  console.log(
    line(
      'peak RSS',
      samples.map((sample) => sample.peakRssMb),
      'MiB',
    ),
  );
}

async function main(): Promise<void> {
  if (!existsSync(MAIN)) throw new Error('run `npm run build` first');
  console.log(`duo-slice start-up, ${RUNS} runs each, ${os.cpus().length} cores, node ${process.version}\n`);
  const first: Sample[] = [];
  const restart: Sample[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-bench-'));
    const redisPrefix = `duobench${process.pid}e${run}`;
    try {
      const env = { DATA_DIR: dataDir, REDIS_PREFIX: redisPrefix };
      first.push(await startOnce(env, PORT));
      restart.push(await startOnce(env, PORT));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      // Its queues' keys (the maintenance scheduler's among them): left behind, each run kept 11.
      await deleteRedisKeys(redisPrefix);
    }
  }
  report('embedded (PGlite), first start: initdb + migrations + demo data', first);
  report('embedded (PGlite), restart', restart);

  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const postgres: Sample[] = [];
  try {
    for (let run = 0; run < RUNS; run += 1) {
      const name = `duo_bench_${process.pid}_${run}`;
      await admin.query(`CREATE DATABASE "${name}"`);
      const url = new URL(ADMIN_URL);
      url.pathname = `/${name}`;
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-bench-'));
      const redisPrefix = `duobench${process.pid}p${run}`;
      try {
        postgres.push(await startOnce({ DATA_DIR: dataDir, DATABASE_URL: url.toString(), REDIS_PREFIX: redisPrefix }, PORT + 1));
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
        await deleteRedisKeys(redisPrefix);
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      }
    }
  } finally {
    await admin.end();
  }
  report('PostgreSQL, first start (migrations)', postgres);
  console.log(machineLoad());
  const idle = median(restart.map((sample) => sample.idleRssMb));
  reportFigures([
    { figure: 'idle RSS, embedded (restart, 5 s idle)', target: '300 MiB', result: `${idle.toFixed(0)} MiB`, met: idle < 300 },
    {
      figure: 'idle RSS, PostgreSQL',
      target: 'none',
      result: `${median(postgres.map((sample) => sample.idleRssMb)).toFixed(0)} MiB`,
      met: null,
    },
  ]);
}

runBench(main);
