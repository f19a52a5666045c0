import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import { threadFile } from '../paths';
import { pgdataPath } from './embedded-data-dir';
import { DEFAULT_EMBEDDED_SHARED_BUFFERS_MB } from './embedded-settings';
import { acquireLock, publishSocketPath, readLiveLock, releaseLock } from './embedded-lock';
import { migrate, type MigrationResult } from './migrate';
import type { PGliteThreadData, PGliteThreadReply } from './pglite.thread';
import { PrismaClient } from './prisma';
import { registerBulkPool } from './bulk-sql';
import { withPoolClient } from './pool-client';
import type { AnswerWatchEvents } from '../answer-watch';
import { createTimedPool } from './request-timeout';
import type { SqlExecutor } from './sql-executor';

export type DatabaseKind = 'postgres' | 'embedded' | 'embedded-socket';

export type Database = {
  kind: DatabaseKind;
  /** Requests' client: with `requestTimeoutMs`, each statement and each wait for a connection is limited. */
  prisma: PrismaClient;
  /**
   * Jobs' client, with `jobTimeoutMs`: a pool of its own, made on first use when the two limits differ,
   * else `prisma` itself.
   */
  readonly jobPrisma: PrismaClient;
  executor: SqlExecutor;
  /** Applies pending migrations and checks that pgvector is there. */
  migrate(): Promise<MigrationResult>;
  close(): Promise<void>;
};

export type OpenDatabaseOptions = {
  /** PostgreSQL URL; unset means the embedded PGlite database under dataDir. */
  databaseUrl: string | undefined;
  dataDir: string;
  logger: Logger;
  /**
   * Embedded only. `owner` (the service) opens the data directory and serves a socket for other
   * processes; `client` (admin commands) goes through a running owner's socket when there is one.
   */
  embeddedRole: 'owner' | 'client';
  /** Connections in the pool. Default 10 for PostgreSQL, 4 for the embedded database (one session: they take turns). */
  poolSize?: number;
  /**
   * A limit on each statement and each wait for a connection, in ms (request-timeout.ts); unset: none. The service
   * sets it in a process that serves requests and runs no jobs; admin commands and tools do not.
   */
  requestTimeoutMs?: number;
  /** The same limit for jobs' statements (jobPrisma), longer than a request's; unset: none. */
  jobTimeoutMs?: number;
  /**
   * With `requestTimeoutMs`: told when the requests' pool finds PostgreSQL not answering and answering again, and
   * of each statement refused meanwhile (request-timeout.ts); the change is logged here.
   */
  failFast?: Omit<AnswerWatchEvents, 'probeIntervalMs'>;
  /** Called with a PostgreSQL pool once made (metrics watch it). */
  onPool?: (pool: pg.Pool) => void;
  /** Embedded only: PostgreSQL's shared buffers, in MiB (they count in the process's memory). Default 16. */
  embeddedSharedBuffersMb?: number;
  /** Embedded only: called (after an error is logged) if the database's thread dies while open; every query fails from then on. */
  onFailure?: (error: Error) => void;
};

const MIN_PGVECTOR = [0, 8];
// The name pg gives a server's Unix socket: <dir>/.s.PGSQL.<port>.
const SOCKET_PORT = 5432;

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  const owner = options.embeddedRole === 'client' ? readLiveLock(options.dataDir) : null;
  if (owner?.socketPath) {
    options.logger.debug({ event: 'embedded_database_via_socket', pid: owner.pid }, 'using the running service database');
    // pg finds a Unix socket as <host directory>/.s.PGSQL.<port>.
    const socketDir = path.dirname(owner.socketPath);
    return openPostgres(
      `postgresql://postgres@localhost:${SOCKET_PORT}/postgres?host=${encodeURIComponent(socketDir)}`,
      { ...options, poolSize: 1 },
      'embedded-socket',
    );
  }
  return openEmbedded(options);
}

async function openPostgres(databaseUrl: string, options: OpenDatabaseOptions, kind: DatabaseKind = 'postgres'): Promise<Database> {
  return poolDatabase(kind, { connectionString: databaseUrl, max: options.poolSize ?? 10 }, options);
}

type PooledClient = { pool: pg.Pool; prisma: PrismaClient };

/** PostgreSQL, or the embedded database's socket: the same pools, Prisma adapter and migrations. */
function poolDatabase(kind: DatabaseKind, config: pg.PoolConfig, options: OpenDatabaseOptions): Database {
  const watch: AnswerWatchEvents = {
    onRefused: options.failFast?.onRefused,
    onChange: (answering) => {
      if (answering) options.logger.info({ event: 'database_answering' }, 'the database answers again');
      else
        options.logger.warn(
          { event: 'database_not_answering' },
          "the database did not answer in time: requests' statements fail at once until it answers",
        );
      options.failFast?.onChange?.(answering);
    },
  };
  const open = (timeoutMs: number | undefined): PooledClient => {
    const pool = createTimedPool(config, timeoutMs, watch);
    pool.on('error', (error) => options.logger.warn({ event: 'database_pool_error', err: error }, 'idle database connection failed'));
    options.onPool?.(pool);
    // `minimal`: otherwise (without NODE_ENV=production) Prisma makes an Error, and so captures a stack, for
    // every query it sends, to point at the caller's line should it fail.
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool), errorFormat: 'minimal' });
    registerBulkPool(prisma, pool, { sessionPerConnection: kind === 'postgres' });
    return { pool, prisma };
  };
  const requests = open(options.requestTimeoutMs);
  let jobs: PooledClient | null = options.requestTimeoutMs === options.jobTimeoutMs ? requests : null;
  const { pool, prisma } = requests;
  return {
    kind,
    prisma,
    get jobPrisma() {
      jobs ??= open(options.jobTimeoutMs);
      return jobs.prisma;
    },
    executor: executorFor(pool),
    // The advisory lock and BEGIN/COMMIT belong to one session: keep one connection throughout. No request
    // timeout: building an index on a large table takes as long as it takes.
    migrate: () => withPoolClient(pool, (connection) => migrateAndCheck(executorFor(connection, { untimed: true }))),
    close: async () => {
      for (const client of new Set([requests, jobs])) {
        if (!client) continue;
        await client.prisma.$disconnect();
        await client.pool.end();
      }
    },
  };
}

function executorFor(queryable: pg.Pool | pg.PoolClient, options: { untimed?: boolean } = {}): SqlExecutor {
  // query_timeout 0: none, whatever the pool's (request-timeout.ts).
  const statement = (text: string, values?: unknown[]) => (options.untimed ? { text, values, query_timeout: 0 } : { text, values });
  return {
    query: async <Row>(sql: string, params?: unknown[]) => (await queryable.query(statement(sql, params))).rows as Row[],
    exec: async (sql) => {
      await queryable.query(statement(sql));
    },
  };
}

async function migrateAndCheck(executor: SqlExecutor): Promise<MigrationResult> {
  const available = await executor.query<{ version: string }>(
    "SELECT default_version AS version FROM pg_available_extensions WHERE name = 'vector'",
  );
  if (available.length === 0) {
    throw new AppError({
      code: 'INTERNAL',
      userMessage:
        "The PostgreSQL server has no pgvector extension. Install it (bash scripts/install-pgvector.sh builds it from Debian's source " +
        'package) or leave DATABASE_URL unset to use the embedded database.',
    });
  }
  const result = await migrate({ executor });
  const [installed] = await executor.query<{ version: string }>("SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'");
  const [major = 0, minor = 0] = (installed?.version ?? '0.0').split('.').map(Number);
  if (major < MIN_PGVECTOR[0] || (major === MIN_PGVECTOR[0] && minor < MIN_PGVECTOR[1])) {
    throw new AppError({
      code: 'INTERNAL',
      userMessage:
        `pgvector ${installed?.version ?? 'unknown'} is too old: duo-slice needs ${MIN_PGVECTOR.join('.')} or newer (ALTER ` +
        `EXTENSION vector UPDATE after installing it).`,
    });
  }
  return result;
}

/**
 * The embedded database: PGlite in a worker thread of its own (pglite.thread.ts), so no statement
 * holds up this thread's event loop, reached like PostgreSQL (`pg`, one code path) through a Unix
 * socket in a directory only this user may enter. The owner publishes that socket for admin commands.
 */
async function openEmbedded(options: OpenDatabaseOptions): Promise<Database> {
  acquireLock(options.dataDir);
  // PGlite's socket takes any connection without a password: a Unix socket in a directory only
  // this user may enter (mkdtemp makes it 0700) keeps everyone else on the machine out. In the
  // temporary directory, because a socket path must be short (about 100 bytes).
  const socketDir = mkdtempSync(path.join(os.tmpdir(), 'duo-pglite-'));
  chmodSync(socketDir, 0o700);
  const socketPath = path.join(socketDir, `.s.PGSQL.${SOCKET_PORT}`);
  const pgdata = pgdataPath(options.dataDir);
  let thread: DatabaseThread;
  try {
    thread = await startDatabaseThread({
      pgdata,
      socketPath,
      sharedBuffersMb: options.embeddedSharedBuffersMb ?? DEFAULT_EMBEDDED_SHARED_BUFFERS_MB,
    });
  } catch (error) {
    rmSync(socketDir, { recursive: true, force: true });
    releaseLock(options.dataDir);
    const postgresLog = error instanceof DatabaseOpenError ? error.postgresLog : [];
    options.logger.error({ event: 'embedded_database_open_failed', pgdata, err: error }, 'the embedded database could not be opened');
    throw new AppError({ code: 'INTERNAL', userMessage: cannotOpen(pgdata, error, postgresLog), cause: error });
  }
  if (thread.setAside) {
    options.logger.warn(
      { event: 'embedded_database_set_aside', pgdata, setAside: thread.setAside },
      `${pgdata} held no database (an interrupted first start): moved to ${thread.setAside}, and a new database made`,
    );
  }
  let closing = false;
  void thread.exited.then((failure) => {
    if (closing) return;
    options.logger.error(
      { event: 'embedded_database_failed', err: failure },
      'the embedded database thread stopped: every query fails until the service restarts',
    );
    options.onFailure?.(failure);
  });
  if (options.embeddedRole === 'owner') publishSocketPath(options.dataDir, socketPath);
  // PGlite is one session: its thread runs one connection's transaction at a time, whatever the pool size.
  const database = poolDatabase(
    'embedded',
    { host: socketDir, port: SOCKET_PORT, user: 'postgres', database: 'postgres', max: options.poolSize ?? 4 },
    options,
  );
  // Not a spread: it would make the jobs' pool at once (jobPrisma is made on first use).
  const closePools = database.close.bind(database);
  database.close = async () => {
    closing = true;
    try {
      await closePools();
    } finally {
      await thread.close();
      rmSync(socketDir, { recursive: true, force: true });
      releaseLock(options.dataDir);
    }
  };
  return database;
}

type DatabaseThread = {
  /** Settles when the thread has gone, with why (an Error whatever the cause). */
  exited: Promise<Error>;
  /** Closes PGlite in order (the socket first); stops the thread outright if it takes too long. */
  close(): Promise<void>;
  /** Where a `pgdata` that held no database was moved before a new one was made, if one was. */
  setAside: string | null;
};

/** PGlite's failure to open, with what PostgreSQL printed meanwhile (its reason, where PGlite's message has none). */
class DatabaseOpenError extends Error {
  constructor(
    message: string,
    readonly postgresLog: string[],
  ) {
    super(message);
    this.name = 'DatabaseOpenError';
  }
}

/** What the operator reads: which directory, why, and what to do; nothing in the directory is changed for them. */
function cannotOpen(pgdata: string, error: unknown, postgresLog: string[]): string {
  // PostgreSQL's fatal line, without its timestamp (a HINT after it may say "initdb", which is not advice for a database with data).
  const fatal = postgresLog.findLast((line) => /\b(FATAL|PANIC):/.test(line))?.replace(/^.*?\b(FATAL|PANIC):\s*/, '');
  const reason = fatal ?? postgresLog.at(-1) ?? (error instanceof Error ? error.message : String(error));
  return (
    `Cannot open the embedded database in ${pgdata}: ${reason}. It was left as it is (the cause is logged as ` +
    `embedded_database_open_failed). If no service has ever run on it, move it aside and start again to make a new ` +
    `database; if it holds data, restore it from a backup, or set DATA_DIR to another directory meanwhile.`
  );
}

const THREAD = threadFile(__filename, 'pglite.thread');
const THREAD_CLOSE_MS = 30_000;

async function startDatabaseThread(data: PGliteThreadData): Promise<DatabaseThread> {
  const worker = new Worker(THREAD.file, { execArgv: THREAD.execArgv, name: 'duo-pglite', workerData: data });
  let lastError: Error | null = null;
  worker.on('error', (error) => {
    lastError = error;
  });
  const exited = new Promise<Error>((resolve) => {
    worker.once('exit', (code) => resolve(lastError ?? new Error(`the embedded database thread exited with code ${code}`)));
  });
  const answered = new Promise<PGliteThreadReply>((resolve) => worker.once('message', resolve));
  const first = await Promise.race([answered, exited.then((error) => Promise.reject(error))]).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  if (first.type !== 'ready') {
    await worker.terminate();
    if (first.type !== 'failed') throw new Error('the embedded database thread closed before it opened');
    const error = new DatabaseOpenError(first.message, first.postgresLog);
    if (first.stack) error.stack = first.stack;
    throw error;
  }
  return {
    setAside: first.setAside,
    exited,
    close: async () => {
      worker.postMessage('close');
      const timer = setTimeout(() => void worker.terminate(), THREAD_CLOSE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
