/**
 * What the benches share: percentiles, time limits with a clear message, the machine's load, and
 * the one line each bench prints for `npm run bench` (bench/all.ts) to gather into its table.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';

/** One figure of the table: its name, the target as text, the measured value, and whether it met the target. */
export type Figure = { figure: string; target: string; result: string; met: boolean | null };

export const FIGURES_PREFIX = 'BENCH_FIGURES ';

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export const median = (values: readonly number[]) => percentile(values, 50);

/** The load average and cores, to print beside every figure (the machine may be shared). */
export function machineLoad(): string {
  const [one, five] = os.loadavg();
  return `load ${one.toFixed(2)} / ${five.toFixed(2)} (1 / 5 min) on ${os.cpus().length} cores`;
}

/** Resolves as `promise` does, or fails after `ms` with `message`: nothing a bench waits for may hang it. */
export async function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} (no answer within ${(ms / 1000).toFixed(0)} s)`)), ms);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A closed-loop load: `clients` concurrent loops, each sending `request` again as soon as it is answered, until
 * `seconds` have passed; every result, in the order they came.
 */
export async function closedLoop<T>(clients: number, seconds: number, request: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) results.push(await request());
    }),
  );
  return results;
}

/** `request` as one that answers with its wall time in ms. */
export function timed(request: () => Promise<unknown>): () => Promise<number> {
  return async () => {
    const started = performance.now();
    await request();
    return performance.now() - started;
  };
}

/** A load's p50, p99 and throughput, each the median over its runs, in the columns the benches print. */
export function loadColumns(runs: ReadonlyArray<{ p50: number; p99: number; perSecond: number }>): string {
  const mid = (pick: (run: (typeof runs)[number]) => number) => median(runs.map(pick));
  return (
    `p50 ${mid((run) => run.p50)
      .toFixed(1)
      .padStart(6)} ms   p99 ${mid((run) => run.p99)
      .toFixed(1)
      .padStart(6)} ms   ` +
    `${mid((run) => run.perSecond)
      .toFixed(0)
      .padStart(5)} req/s`
  );
}

/** Prints the figures as one line for bench/all.ts, after the bench's own report. */
export function reportFigures(figures: readonly Figure[]): void {
  console.log(`${FIGURES_PREFIX}${JSON.stringify(figures)}`);
}

/** Whether bench/all.ts asked for the quick mode (fewer runs, smaller data). */
export const QUICK = process.env.BENCH_QUICK === '1';

/** Exits once stdout is flushed: through a pipe (bench/all.ts) writes are asynchronous and process.exit would cut them. */
export function exitWhenFlushed(code: number): void {
  process.stdout.write('', () => process.exit(code));
}

/**
 * Runs a bench's main, then exits: 0, or 1 after printing what failed (bench/all.ts reports it).
 * A main that can no longer settle (it awaits something nothing will ever resolve, and no timer or
 * socket is left) would otherwise let Node end quietly with 0, as if the bench had printed its figures.
 */
export function runBench(main: () => Promise<void>): void {
  let settled = false;
  process.once('beforeExit', () => {
    if (settled) return;
    console.error('the bench stopped before it finished: it was waiting for something that can no longer happen');
    exitWhenFlushed(1);
  });
  main().then(
    () => {
      settled = true;
      exitWhenFlushed(0);
    },
    (error: unknown) => {
      settled = true;
      console.error(error);
      exitWhenFlushed(1);
    },
  );
}

/**
 * CPU time (user + system, ms) a process has used so far: this one by default, another by pid
 * (Linux /proc; NaN elsewhere). On a shared machine CPU per request survives the load better than
 * wall time: compare it between runs when latencies are noisy.
 */
export function cpuMs(pid?: number): number {
  if (pid === undefined || pid === process.pid) {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  }
  try {
    // Fields after the command name: utime and stime are the 12th and 13th, in clock ticks (100 a second).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}
