/**
 * Where a phase's CPU went on the whole machine (Linux /proc; NaN elsewhere): all of it, and the
 * parts a bench can name. When clients keep every core busy, a phase's latency follows the
 * machine's CPU per request, whoever spends it: the service, PostgreSQL, Redis, or the bench's own
 * clients and stub model on the same cores (docs/performance.md, "Known limits").
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { cpuMs } from './figures';

/** CPU used so far (ms) by each PostgreSQL backend connected to `database`, by pid. */
export async function backendCpu(adminUrl: string, database: string): Promise<Map<number, number>> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database]);
    return new Map(rows.map(({ pid }) => [pid, cpuMs(pid)]));
  } finally {
    await client.end();
  }
}

/** The backends' CPU between two readings; a backend that connected in between counts from zero. */
export function backendCpuBetween(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let total = 0;
  for (const [pid, used] of after) if (Number.isFinite(used)) total += used - (before.get(pid) ?? 0);
  return total;
}

/** CPU the whole machine has used so far (ms): every core's busy time in /proc/stat (user, nice, system, irq, softirq, steal). */
export function machineCpuMs(): number {
  try {
    const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    // Clock ticks, 100 a second.
    return (user + nice + system + irq + softirq + steal) * 10;
  } catch {
    return Number.NaN;
  }
}

/** CPU Redis has used so far (ms), all its threads, as it reports it (INFO cpu). */
export async function redisCpuMs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const seconds = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return (seconds('used_cpu_sys') + seconds('used_cpu_user')) * 1000;
}

/** The processes a bench names: the service's (API, worker), its database and Redis; the bench is this process. */
export type CpuParts = { apiPid: number; workerPid: number; redis: Redis; adminUrl: string; database: string };

type Reading = { machine: number; bench: number; api: number; worker: number; redis: number; backends: Map<number, number> };

/** CPU per request over a phase, in ms: the machine's, and the parts'. `other` is what none of the parts account for. */
export type CpuShares = { machine: number; bench: number; api: number; worker: number; redis: number; postgres: number; other: number };

export async function readCpu(parts: CpuParts): Promise<Reading> {
  const [redis, backends] = await Promise.all([redisCpuMs(parts.redis), backendCpu(parts.adminUrl, parts.database)]);
  return { machine: machineCpuMs(), bench: cpuMs(), api: cpuMs(parts.apiPid), worker: cpuMs(parts.workerPid), redis, backends };
}

export function cpuShares(before: Reading, after: Reading, requests: number): CpuShares {
  const per = (used: number) => used / requests;
  const shares = {
    machine: per(after.machine - before.machine),
    bench: per(after.bench - before.bench),
    api: per(after.api - before.api),
    worker: per(after.worker - before.worker),
    redis: per(after.redis - before.redis),
    postgres: per(backendCpuBetween(before.backends, after.backends)),
  };
  return { ...shares, other: shares.machine - shares.bench - shares.api - shares.worker - shares.redis - shares.postgres };
}

/** One line: the machine's CPU per request and its parts. */
export function formatShares(shares: CpuShares): string {
  const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');
  return (
    `${ms(shares.machine)} ms (API ${ms(shares.api)}, worker ${ms(shares.worker)}, PostgreSQL ${ms(shares.postgres)}, ` +
    `Redis ${ms(shares.redis)}, the bench's clients and stub ${ms(shares.bench)}, other ${ms(shares.other)})`
  );
}
