import pg from 'pg';

/**
 * The requests' pool: each statement and each wait for a connection fails after `timeoutMs` instead of
 * waiting as long as PostgreSQL takes to answer. The limit is the client's own: a hung server or a network
 * that drops everything would never send PostgreSQL's statement_timeout error. A client whose statement
 * timed out is not handed out again (its connection still carries that statement); the pool opens another.
 *
 * Jobs have no such limit (an index run's statements may take longer, and a failed job is retried anyway):
 * a process that runs them has a second pool for them (database.ts, jobPrisma). Two pools rather than one
 * that tells a request's statements from a job's, which would mean AsyncLocalStorage, whose promise hooks
 * cost every request more than the limit is worth. A statement says `query_timeout: 0` to have none (the
 * migrations).
 */
export function createTimedPool(config: pg.PoolConfig, timeoutMs: number | undefined): pg.Pool {
  if (!timeoutMs) return new pg.Pool(config);

  // pg's overloads (promise or callback) are passed through: only the statement's config changes.
  class TimedClient extends pg.Client {}
  type Query = (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) => unknown;
  const query = Reflect.get(pg.Client.prototype, 'query') as Query;
  TimedClient.prototype.query = function timedQuery(this: pg.Client, config: unknown, values?: unknown, callback?: unknown) {
    const result = query.call(this, withTimeout(config, timeoutMs), values, callback);
    if (result instanceof Promise) {
      // A client checked out of the pool is dropped on release once its statement timed out.
      result.catch((error: unknown) => {
        if (error instanceof Error && error.message === QUERY_TIMEOUT) (this as unknown as { _queryable: boolean })._queryable = false;
      });
    }
    return result;
  } as pg.Client['query'];

  // connectionTimeoutMillis: the wait for a pooled connection, and opening one.
  return new pg.Pool({ ...config, connectionTimeoutMillis: timeoutMs, Client: TimedClient });
}

// What pg says when `query_timeout` passes.
const QUERY_TIMEOUT = 'Query read timeout';

/** The statement's config with the limit, unless it names its own; a Submittable (a cursor) is left as it is. */
function withTimeout(config: unknown, timeoutMs: number): unknown {
  if (typeof config === 'string') return { text: config, query_timeout: timeoutMs };
  if (config === null || typeof config !== 'object') return config;
  const object = config as { submit?: unknown; query_timeout?: number };
  if (typeof object.submit === 'function' || 'query_timeout' in object) return config;
  return { ...object, query_timeout: timeoutMs };
}
