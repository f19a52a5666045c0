/**
 * Indexing speed on a real code base, and the time from a push to a searchable index.
 * Prints figures (medians); it never passes or fails on time.
 *
 *   node -r @swc-node/register bench/index.ts [runs=3] [spec=rxjs@7.8.1] [pushes=5]
 *
 * pushes=0 leaves out part 2. BENCH_TAG=<word> puts the word in the database's name and the Redis
 * prefix (a shared machine's helpers tell their leftovers apart by it).
 *
 * Needs PostgreSQL with pgvector (TEST_DATABASE_URL, default postgres@127.0.0.1:5432) and Redis
 * (TEST_REDIS_URL, default 127.0.0.1:6379), like the tests. The package is fetched with `npm pack`
 * and committed to a git repository once, kept under the system temp folder for later runs.
 *
 * 1. Full index, in this process, with the default lexical embedder, chunking in as many worker
 *    threads (defaultIndexThreads) and with 256 new chunks per transaction as the service on
 *    PostgreSQL, on a fresh database: one untimed warm-up (tree-sitter grammars load), then `runs`
 *    timed runs, each on a new project, so nothing is reused (chunks are stored per project).
 *    Files/s counts the files in the index, MB/s the source bytes read from git; peak RSS is this
 *    process's, sampled every 50 ms. CPU per run: this process's (all threads) and the PostgreSQL
 *    backends' serving the bench's database (/proc, Linux), which on a shared machine vary less
 *    than the wall time.
 * 2. Push to searchable: the real service (role all, INDEX_DEBOUNCE_MS=0) on the same database;
 *    a project with a webhook secret is indexed once, then `pushes` times one file changes, is
 *    committed, the push webhook is posted and GraphQL codeIndex is polled (every 20 ms, as a
 *    project member) until its commitSha is the new commit.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import pg from 'pg';
import { defaultIndexThreads, loadConfig } from '../src/config';
import { openDatabase } from '../src/db/database';
import type { PrismaClient } from '../src/db/prisma';
import { materializeNpmPackage } from '../src/evaluation/npm-source';
import { indexRepository, type IndexRunResult } from '../src/indexing/index-repository';
import { LexicalEmbedder } from '../src/llm/embedders/lexical.embedder';
import { createLogger } from '../src/logger';
import { addMember, createGroup, createProject } from '../src/namespaces/namespaces.service';
import { startService } from '../src/start-service';
import { createToken, createUser } from '../src/users/users.service';
import { deleteRedisKeys } from '../test/helpers/test-service';
import { ChunkPool } from '../src/indexing/chunk-pool';
import { cpuMs, machineLoad, median, QUICK, reportFigures, runBench, type Figure } from './lib/figures';
import { backendCpu, backendCpuBetween } from './lib/machine-cpu';

const RUNS = Number(process.argv[2] ?? (QUICK ? 2 : 3));
const SPEC = process.argv[3] ?? 'rxjs@7.8.1';
const PUSHES = Number(process.argv[4] ?? (QUICK ? 2 : 5));
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const POLL_MS = 20;
const TAG = (process.env.BENCH_TAG ?? '').replace(/\W+/g, '').toLowerCase();
const SECRET = randomBytes(24).toString('base64url');
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
};

type Indexed = Extract<IndexRunResult, { outcome: 'indexed' | 'unchanged' }>;
type Run = { result: Indexed; seconds: number; peakRssMb: number; startRssMb: number; processCpuMs: number; backendCpuMs: number };

const mb = (bytes: number) => bytes / 1_000_000;
const git = (repository: string, ...args: string[]) =>
  execFileSync('git', ['-C', repository, ...args], { encoding: 'utf8', env: GIT_ENV }).trim();

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<Row extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return (await client.query<Row>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

// A full collection before each run, so "RSS before the run" shows what stays, not garbage not yet collected.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

/** Peak RSS while `run` runs, sampled every 50 ms (and at both ends). */
async function withPeakRss<T>(run: () => Promise<T>): Promise<{ value: T; peakRssMb: number; startRssMb: number }> {
  collectGarbage();
  const startRss = process.memoryUsage.rss();
  let peak = startRss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 50);
  try {
    const value = await run();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { value, peakRssMb: peak / 2 ** 20, startRssMb: startRss / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}

async function fullIndexRuns(options: { name: string; url: string; repository: string; dataDir: string }): Promise<Run[]> {
  const logger = createLogger('warn');
  const database = await openDatabase({ databaseUrl: options.url, dataDir: options.dataDir, logger, embeddedRole: 'client', poolSize: 4 });
  try {
    await database.migrate();
    const prisma = database.prisma;
    const group = await createGroup(prisma, { path: 'bench', plan: 'ultimate' });
    const embedder = new LexicalEmbedder();
    const chunker = new ChunkPool({ threads: defaultIndexThreads(true) });
    const runs: Run[] = [];
    for (let run = 0; run <= RUNS; run += 1) {
      const { project } = await createProject(prisma, { fullPath: `${group.fullPath}/run-${run}`, repository: options.repository });
      const backendsBefore = await backendCpu(ADMIN_URL, options.name);
      const processBefore = cpuMs();
      const started = performance.now();
      const { value, peakRssMb, startRssMb } = await withPeakRss(() =>
        indexRepository({
          prisma,
          embedder,
          chunker,
          transactionChunks: 256,
          logger,
          dataDir: options.dataDir,
          projectId: project.id,
          ref: 'main',
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const processCpuMs = cpuMs() - processBefore;
      const backendCpuMs = backendCpuBetween(backendsBefore, await backendCpu(ADMIN_URL, options.name));
      if (value.outcome !== 'indexed' || value.mode !== 'full')
        throw new Error(`run ${run} did not index in full: ${JSON.stringify(value)}`);
      if (value.chunksEmbedded === 0) throw new Error(`run ${run} reused embeddings: the project was not fresh`);
      if (run === 0)
        console.log(
          `  warm-up (not counted)  ${seconds.toFixed(1)} s, RSS ${startRssMb.toFixed(0)} MiB before it, peak ${peakRssMb.toFixed(0)} MiB`,
        );
      else runs.push({ result: value, seconds, peakRssMb, startRssMb, processCpuMs, backendCpuMs });
    }
    await chunker.close();
    return runs;
  } finally {
    await database.close();
  }
}

function reportFullIndex(runs: Run[]): Figure[] {
  const first = runs[0].result;
  const skipped =
    Object.entries(first.skipped)
      .map(([reason, count]) => `${reason} ${count}`)
      .join(', ') || 'none';
  console.log(
    `  per run: ${first.files} files in the index (${first.filesRead} blobs read, skipped: ${skipped}), ${first.chunks} chunks, ` +
      `${first.chunksEmbedded} embedded, ${mb(first.bytesRead).toFixed(2)} MB read`,
  );
  const line = (label: string, values: number[], unit: string, digits = 0) =>
    console.log(
      `  ${label.padEnd(22)} median ${median(values).toFixed(digits).padStart(8)} ${unit.padEnd(9)} (runs: ` +
        `${values.map((value) => value.toFixed(digits)).join(', ')})`,
    );
  line(
    'duration',
    runs.map((run) => run.seconds),
    's',
    2,
  );
  line(
    'files/s',
    runs.map((run) => run.result.files / run.seconds),
    'files/s',
  );
  line(
    'chunks/s',
    runs.map((run) => run.result.chunks / run.seconds),
    'chunks/s',
  );
  line(
    'source read',
    runs.map((run) => mb(run.result.bytesRead) / run.seconds),
    'MB/s',
    2,
  );
  line(
    'process CPU',
    runs.map((run) => run.processCpuMs / 1000),
    's',
    2,
  );
  line(
    'PostgreSQL CPU',
    runs.map((run) => run.backendCpuMs / 1000),
    's',
    2,
  );
  line(
    'peak RSS',
    runs.map((run) => run.peakRssMb),
    'MiB',
  );
  line(
    'RSS before the run',
    runs.map((run) => run.startRssMb),
    'MiB',
  );
  const rate = median(runs.map((run) => mb(run.result.bytesRead) / run.seconds));
  const peak = Math.max(...runs.map((run) => run.peakRssMb));
  const growth = runs[runs.length - 1].startRssMb - runs[0].startRssMb;
  return [
    {
      figure: `indexing ${SPEC}, lexical embedder, PostgreSQL: source read`,
      target: '2 MB/s',
      result: `${rate.toFixed(2)} MB/s`,
      met: rate >= 2,
    },
    {
      figure: `indexing ${SPEC}: peak RSS / RSS growth over ${runs.length} runs`,
      target: '400 MiB / flat',
      result: `${peak.toFixed(0)} / ${growth >= 0 ? '+' : ''}${growth.toFixed(0)} MiB`,
      met: peak < 400 && growth < 30,
    },
  ];
}

/** A file of the code base to edit for each push: a source file of median size, preferring TypeScript under src/. */
function fileToEdit(repository: string): string {
  const files = git(repository, 'ls-tree', '-r', '-l', 'HEAD')
    .split('\n')
    .map((line) => {
      const [meta = '', file = ''] = line.split('\t');
      return { file, size: Number(meta.split(/\s+/)[3]) || 0 };
    })
    .filter(({ file }) => /\.(ts|js)$/.test(file) && !file.endsWith('.d.ts') && !file.includes('.min.'));
  const preferred = [
    files.filter(({ file }) => file.startsWith('src/') && file.endsWith('.ts')),
    files.filter(({ file }) => file.startsWith('src/')),
    files,
  ].find((group) => group.length);
  if (!preferred) throw new Error('the package has no .ts or .js file to edit');
  return [...preferred].sort((a, b) => a.size - b.size)[Math.floor(preferred.length / 2)].file;
}

let pushFigure: Figure | null = null;

async function pushLatency(options: { url: string; source: string; dataDir: string }): Promise<void> {
  const redisPrefix = `duobench:${TAG}${randomBytes(5).toString('hex')}`;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: options.url,
    DATA_DIR: options.dataDir,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    LOG_LEVEL: 'warn',
    DEMO_SEED: 'false',
    INDEX_DEBOUNCE_MS: '0',
  });
  // A clone to commit to, so the materialized package stays as it was published.
  const repository = path.join(options.dataDir, 'pushed');
  execFileSync('git', ['clone', '-q', options.source, repository], { env: GIT_ENV });
  const running = await startService({ config, logger: createLogger(config.logLevel), role: 'all' });
  try {
    const prisma: PrismaClient = running.services.prisma;
    const user = await createUser(prisma, { username: 'bench-developer' });
    const { token } = await createToken(prisma, { username: user.username });
    const { project } = await createProject(prisma, { fullPath: 'bench/pushed', repository, webhookSecret: SECRET });
    await addMember(prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });

    const push = async (before: string, after: string, changed: string[]) => {
      const response = await fetch(`${running.url}/api/v4/webhooks/push`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'X-Gitlab-Event': 'Push Hook',
          'X-Gitlab-Token': SECRET,
          'X-Gitlab-Event-UUID': randomUUID(),
        },
        body: JSON.stringify({
          object_kind: 'push',
          ref: 'refs/heads/main',
          before,
          after,
          checkout_sha: after,
          total_commits_count: 1,
          project: { id: project.id, path_with_namespace: project.fullPath, default_branch: 'main', git_http_url: `file://${repository}` },
          commits: [{ added: [], modified: changed, removed: [] }],
        }),
      });
      if (response.status !== 202) throw new Error(`webhook answered ${response.status}: ${await response.text()}`);
    };
    const query = `query($path: ID!) { project(fullPath: $path) { codeIndex(ref: "main") { state commitSha lastError } } }`;
    const waitForCommit = async (commit: string, timeoutMs: number) => {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const response = await fetch(`${running.url}/api/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ query, variables: { path: project.fullPath } }),
        });
        const body = (await response.json()) as {
          data?: { project?: { codeIndex?: { state: string; commitSha: string | null; lastError: string | null } | null } | null };
        };
        const index = body.data?.project?.codeIndex;
        if (index?.commitSha === commit) return;
        if (index?.state === 'FAILED' || performance.now() > deadline)
          throw new Error(`index did not reach ${commit}: ${JSON.stringify(body)}`);
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    };

    const initial = git(repository, 'rev-parse', 'HEAD');
    let started = performance.now();
    await push('0'.repeat(40), initial, []);
    await waitForCommit(initial, 10 * 60_000);
    console.log(`  initial index through the webhook   ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const file = fileToEdit(repository);
    const latencies: number[] = [];
    let before = initial;
    for (let attempt = 1; attempt <= PUSHES; attempt += 1) {
      appendFileSync(path.join(repository, file), `\nexport function benchEdit${attempt}(value) {\n  return value * ${attempt};\n}\n`);
      git(repository, 'commit', '-q', '-am', `bench edit ${attempt}`);
      const after = git(repository, 'rev-parse', 'HEAD');
      started = performance.now();
      await push(before, after, [file]);
      await waitForCommit(after, 60_000);
      latencies.push(performance.now() - started);
      before = after;
    }
    console.log(`  one changed file (${file}), ${PUSHES} pushes, polled every ${POLL_MS} ms`);
    pushFigure = {
      figure: 'push webhook to searchable (one changed file), median',
      target: 'none',
      result: `${median(latencies).toFixed(0)} ms`,
      met: null,
    };
    console.log(
      `  push to searchable   median ${median(latencies).toFixed(0)} ms   max ${Math.max(...latencies).toFixed(0)} ms   (runs: ` +
        `${latencies.map((value) => value.toFixed(0)).join(', ')})`,
    );
  } finally {
    await running.close();
    await deleteRedisKeys(redisPrefix);
  }
}

async function main(): Promise<void> {
  const source = path.join(os.tmpdir(), 'duo-bench-npm', SPEC.replace(/[^\w.-]+/g, '_'));
  const materialized = await materializeNpmPackage({ spec: SPEC, directory: source });
  console.log(
    `duo-slice indexing, ${SPEC} (${materialized.files} files, ${mb(materialized.bytes).toFixed(1)} MB in git), ${os.cpus().length} ` +
      `cores, node ${process.version}; ${machineLoad()}\n`,
  );
  const name = `duo_bench_${TAG}${randomBytes(6).toString('hex')}`;
  await admin(`CREATE DATABASE "${name}"`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-bench-'));
  try {
    console.log(`full index, lexical embedder, PostgreSQL; median of ${RUNS} runs, each a fresh project (nothing reused)`);
    const figures = reportFullIndex(await fullIndexRuns({ name, url: databaseUrl(name), repository: materialized.repository, dataDir }));
    if (PUSHES > 0) {
      console.log('\npush webhook to searchable (service role all, INDEX_DEBOUNCE_MS=0, incremental run)');
      await pushLatency({ url: databaseUrl(name), source: materialized.repository, dataDir });
    }
    console.log(`  ${machineLoad()}`);
    reportFigures(pushFigure ? [...figures, pushFigure] : figures);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
}

runBench(main);
