import pg from 'pg';
import { AnswerWatch, type AnswerWatchEvents } from '../answer-watch';
import { DATABASE_NOT_ANSWERING } from './errors';

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
 *
 * With `timeoutMs`, the pool also fails fast: once a statement or a wait for a connection ran out of time, every
 * connection asked of the pool (and so every statement sent through it: `pool.query` takes one too) fails at
 * once, unsent, until a probe (a connection of its own and `SELECT 1`, at once and then every `probeIntervalMs`: AnswerWatch)
 * is answered. So while PostgreSQL hangs only the requests already waiting pay the timeout. A connection already
 * checked out keeps sending: refusing a transaction's ROLLBACK would hand it back to the pool still open.
 */
export function createTimedPool(config: pg.PoolConfig, timeoutMs: number | undefined, watch: AnswerWatchEvents = {}): pg.Pool {
  if (!timeoutMs) return new pg.Pool(config);
  const state = new AnswerWatch({ ...watch, ask: () => answersSelect(config, timeoutMs) });

  // pg's overloads (promise or callback) are passed through: only the statement's config changes.
  class TimedClient extends pg.Client {}
  type Query = (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) => unknown;
  const query = Reflect.get(pg.Client.prototype, 'query') as Query;
  TimedClient.prototype.query = function timedQuery(this: pg.Client, config: unknown, values?: unknown, callback?: unknown) {
    const result = query.call(this, withTimeout(config, timeoutMs), values, callback);
    if (result instanceof Promise) {
      // A client checked out of the pool is dropped on release once its statement timed out.
      result.catch((error: unknown) => {
        if (!(error instanceof Error) || error.message !== QUERY_TIMEOUT) return;
        (this as unknown as { _queryable: boolean })._queryable = false;
        state.stoppedAnswering();
      });
    }
    return result;
  } as pg.Client['query'];

  // connectionTimeoutMillis: the wait for a pooled connection, and opening one.
  class TimedPool extends pg.Pool {
    override connect(): Promise<pg.PoolClient>;
    override connect(
      callback: (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
    ): void;
    override connect(callback?: (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void) {
      if (!state.answering) return refuse(state, callback) as Promise<pg.PoolClient>;
      if (callback) {
        return super.connect((error, client, done) => {
          if (error && CONNECT_TIMEOUT.test(error.message)) state.stoppedAnswering();
          callback(error, client, done);
        });
      }
      const connected = super.connect();
      connected.catch((error: unknown) => {
        if (error instanceof Error && CONNECT_TIMEOUT.test(error.message)) state.stoppedAnswering();
      });
      return connected;
    }

    override end(): Promise<void>;
    override end(callback: () => void): void;
    override end(callback?: () => void) {
      state.stop();
      return callback ? super.end(callback) : super.end();
    }
  }
  return new TimedPool({ ...config, connectionTimeoutMillis: timeoutMs, Client: TimedClient });
}

/** A refusal in the caller's form: the callback's error, or a rejected promise. */
function refuse(state: AnswerWatch, callback: unknown): Promise<never> | undefined {
  state.refused();
  const error = new Error(DATABASE_NOT_ANSWERING);
  if (typeof callback === 'function') {
    process.nextTick(() => (callback as (error: Error) => void)(error));
    return undefined;
  }
  return Promise.reject(error);
}

/** The probe: `SELECT 1` on a connection of its own, so that none of the pool's stuck ones is asked. */
async function answersSelect(config: pg.PoolConfig, timeoutMs: number): Promise<boolean> {
  const { max: _max, ...settings } = config;
  const client = new pg.Client({ ...settings, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    void client.end().catch(() => undefined);
  }
}

// What pg says when a wait for a pooled connection, or opening one, passes connectionTimeoutMillis.
const CONNECT_TIMEOUT = /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout)$/;

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
