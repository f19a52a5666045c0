import type pg from 'pg';

/**
 * Large writes (an index run's chunks: megabytes of code, vectors and full-text documents per
 * statement) go straight to the PostgreSQL pool when there is one. Through Prisma, every raw
 * statement's parameters also pass through its query compiler, and the process kept about 3 MiB
 * for each such statement of 1 MB (measured: +200 MiB of RSS after 80 of them), where `pg` alone
 * keeps nothing. The pool is found from the Prisma client it backs, so callers keep passing one
 * client. The embedded database has a pool too (its thread's socket), so the same path serves it;
 * a client made elsewhere (no pool known) keeps writing through Prisma.
 */
const pools = new WeakMap<object, pg.Pool>();

/** Called by openDatabase for the client it makes over a pool (PostgreSQL's, or the embedded database's socket). */
export function registerBulkPool(prisma: object, pool: pg.Pool): void {
  pools.set(prisma, pool);
}

/** One statement with positional parameters, on the transaction's connection. */
export type BulkStatement = (sql: string, params?: unknown[]) => Promise<unknown>;

/**
 * Runs `work` in a transaction on one connection of the client's PostgreSQL pool, or answers
 * undefined (without running it) when the client has no pool. Statements time out after
 * `timeoutMs`, as Prisma's interactive transactions do.
 */
export async function withBulkTransaction<T>(
  prisma: object,
  options: { timeoutMs: number },
  work: (statement: BulkStatement) => Promise<T>,
): Promise<{ value: T } | undefined> {
  const pool = pools.get(prisma);
  if (!pool) return undefined;
  const client = await pool.connect();
  let broken: unknown;
  try {
    await client.query('BEGIN');
    try {
      await client.query("SELECT set_config('statement_timeout', $1, true)", [String(options.timeoutMs)]);
      const value = await work(async (sql, params) => client.query(sql, params));
      await client.query('COMMIT');
      return { value };
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => (broken = rollbackError));
      throw error;
    }
  } finally {
    // A connection whose rollback failed is in an unknown state: it is closed, not reused.
    client.release(broken instanceof Error ? broken : undefined);
  }
}

/**
 * A read straight on the client's pool (search's ranking statements, about 50–100 rows with code
 * each, on the path of every search), or undefined (without running it) when the client has no
 * pool. Through Prisma, each such statement also passes its parameters and rows through Prisma's
 * query compiler and result mapping: measured on bench/search.ts's questions at 100k chunks, about
 * 0.8 ms of this process's CPU per search (4.8 → 4.0 ms at the median). Same SQL, same connection
 * pool, same plans (PostgreSQL plans an unnamed statement for its parameters either way).
 * Parameters as Prisma takes them (a bigint is sent as text); int8 results come back as text.
 */
export async function directRead<Row>(prisma: object, sql: string, parameters: readonly unknown[]): Promise<Row[] | undefined> {
  const pool = pools.get(prisma);
  if (!pool) return undefined;
  const values = parameters.map((value) => (typeof value === 'bigint' ? value.toString() : value));
  return (await pool.query(sql, values)).rows as Row[];
}
