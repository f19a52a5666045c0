/**
 * The start of an index run on a large repository: how long it holds the event loop, and how long
 * until its first batch. Prints figures (medians); it never passes or fails on time.
 *
 *   node -r @swc-node/register bench/large-tree.ts [files=91000] [runs=3]
 *
 * A synthetic repository made with `git fast-import` (files of 200 small TypeScript blobs under 400
 * packages, a third of them named .png so the filter drops them; packed, as a fetched mirror is) is
 * indexed into a fresh project each run, in this process, as the service does on PostgreSQL. The run
 * is stopped once its first batch has been planned (its `indexing` phase), so only the start counts:
 * listing the tree, filtering and sizing every path, and picking the files. The event loop's delay is
 * sampled by `monitorEventLoopDelay` (1 ms resolution) from the run's start to its stop; a request
 * arriving during the longest stall waits that long.
 *
 * Needs PostgreSQL with pgvector (TEST_DATABASE_URL, default postgres@127.0.0.1:5432) and git.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { openDatabase } from '../src/db/database';
import { ChunkPool } from '../src/indexing/chunk-pool';
import { indexRepository } from '../src/indexing/index-repository';
import { LexicalEmbedder } from '../src/llm/embedders/lexical.embedder';
import { createLogger } from '../src/logger';
import { createGroup, createProject } from '../src/namespaces/namespaces.service';
import { machineLoad, median, QUICK, reportFigures, runBench, within } from './lib/figures';

const FILES = Number(process.argv[2] ?? 91_000);
const RUNS = Number(process.argv[3] ?? 3);
if (!Number.isInteger(FILES) || FILES < 1 || FILES > 1_000_000) throw new Error('files: a whole number from 1 to 1,000,000');
if (!Number.isInteger(RUNS) || RUNS < 1 || RUNS > 20) throw new Error('runs: a whole number from 1 to 20');
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
/** The longest one run may take to reach its first batch. */
const RUN_LIMIT_MS = 120_000;

/** A repository of `files` files in one commit, written by git fast-import (seconds, where `git add` takes minutes). */
function makeRepository(directory: string, files: number): void {
  execFileSync('git', ['init', '-q', '-b', 'main', directory]);
  const blobs = 200;
  const parts: string[] = [];
  for (let index = 0; index < blobs; index += 1) {
    const data = `export function f${index}(a: number) {\n  return a + ${index};\n}\n`;
    parts.push(`blob\nmark :${index + 1}\ndata ${Buffer.byteLength(data)}\n${data}\n`);
  }
  parts.push('commit refs/heads/main\ncommitter bench <bench@localhost> 1700000000 +0000\ndata 5\nbench\n');
  for (let index = 0; index < files; index += 1) {
    const name = index % 3 === 0 ? `file${index}.png` : `file${index}.ts`;
    parts.push(`M 100644 :${(index % blobs) + 1} pkg${index % 400}/src/dir${index % 37}/${name}\n`);
  }
  parts.push('\n');
  execFileSync('git', ['-C', directory, 'fast-import', '--quiet'], { input: parts.join(''), maxBuffer: 1 << 30 });
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

type Run = { stallMs: number; p99Ms: number; firstBatchMs: number };

async function main(): Promise<void> {
  const name = `duo_bench_tree_${randomBytes(6).toString('hex')}`;
  await admin(`CREATE DATABASE "${name}"`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-bench-tree-'));
  const repository = path.join(dataDir, 'repository');
  try {
    let started = performance.now();
    makeRepository(repository, FILES);
    console.log(
      `duo-slice large tree: ${FILES} files (git fast-import, ${((performance.now() - started) / 1000).toFixed(1)} s), ${RUNS} runs` +
        `${QUICK ? ' (quick mode)' : ''}, node ${process.version}; ${machineLoad()}`,
    );
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    const logger = createLogger('warn');
    const database = await openDatabase({ databaseUrl: url.toString(), dataDir, logger, embeddedRole: 'client', poolSize: 4 });
    const chunker = new ChunkPool({ threads: 2 });
    const runs: Run[] = [];
    try {
      await database.migrate();
      await createGroup(database.prisma, { path: 'bench', plan: 'ultimate' });
      for (let run = 0; run <= RUNS; run += 1) {
        const { project } = await createProject(database.prisma, { fullPath: `bench/run-${run}`, repository });
        const controller = new AbortController();
        const delay = monitorEventLoopDelay({ resolution: 1 });
        let firstBatchMs = Number.NaN;
        started = performance.now();
        delay.enable();
        const indexing = indexRepository({
          prisma: database.prisma,
          embedder: new LexicalEmbedder(),
          chunker,
          transactionChunks: 256,
          logger,
          dataDir,
          projectId: project.id,
          ref: 'main',
          signal: controller.signal,
          onProgress: (progress) => {
            if (progress.phase !== 'indexing' || !Number.isNaN(firstBatchMs)) return;
            firstBatchMs = performance.now() - started;
            controller.abort();
          },
        }).catch((error: unknown) => {
          if (!controller.signal.aborted) throw error;
        });
        await within(indexing, RUN_LIMIT_MS, `run ${run} did not reach its first batch`);
        delay.disable();
        if (Number.isNaN(firstBatchMs)) throw new Error(`run ${run} ended without planning a batch`);
        const result = { stallMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6, firstBatchMs };
        const label = run === 0 ? 'warm-up (not counted)' : `run ${run}`;
        console.log(
          `  ${label.padEnd(22)} longest stall ${result.stallMs.toFixed(0)} ms, p99 ${result.p99Ms.toFixed(0)} ms; ` +
            `first batch after ${result.firstBatchMs.toFixed(0)} ms`,
        );
        if (run > 0) runs.push(result);
      }
    } finally {
      await chunker.close();
      await database.close();
    }
    const stall = median(runs.map((run) => run.stallMs));
    const firstBatch = median(runs.map((run) => run.firstBatchMs));
    console.log(`  median: longest stall ${stall.toFixed(0)} ms, first batch after ${firstBatch.toFixed(0)} ms; ${machineLoad()}`);
    reportFigures([
      {
        figure: `start of an index run on ${FILES} files: longest event-loop stall / first batch`,
        target: 'none',
        result: `${stall.toFixed(0)} / ${firstBatch.toFixed(0)} ms`,
        met: null,
      },
    ]);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
}

runBench(main);
