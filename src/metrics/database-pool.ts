import type { Pool } from 'pg';
import { metrics } from './registry';

const pools = new Set<Pool>();

/** Reports a PostgreSQL pool's connections at scrape time, until it ends. */
export function observeDatabasePool(pool: Pool): void {
  pools.add(pool);
}

export function collectDatabasePools(): void {
  let total = 0;
  let idle = 0;
  let waiting = 0;
  for (const pool of pools) {
    if (pool.ended) {
      pools.delete(pool);
      continue;
    }
    total += pool.totalCount;
    idle += pool.idleCount;
    waiting += pool.waitingCount;
  }
  metrics.dbPoolConnections.set({ state: 'total' }, total);
  metrics.dbPoolConnections.set({ state: 'idle' }, idle);
  metrics.dbPoolConnections.set({ state: 'in_use' }, total - idle);
  metrics.dbPoolConnections.set({ state: 'waiting' }, waiting);
}
