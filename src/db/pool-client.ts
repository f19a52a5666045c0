import type pg from 'pg';

/**
 * Runs `work` on one connection checked out of the pool, then hands it back, closed instead of
 * reused when it broke: an error the connection raised (its backend ended by a restart, a failover
 * or pg_terminate_backend; the network), or one `work` reports through `broke` (a failed ROLLBACK).
 * While a connection is checked out the pool does not listen for its errors: without a listener
 * here, a backend that dies under it raises an 'error' event nobody handles, which ends the process.
 */
export async function withPoolClient<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient, broke: (error: unknown) => void) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const broke = (error: unknown) => {
    broken ??= error instanceof Error ? error : new Error(String(error));
  };
  client.on('error', broke);
  try {
    return await work(client, broke);
  } finally {
    client.off('error', broke);
    client.release(broken);
  }
}
