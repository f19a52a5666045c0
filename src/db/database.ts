import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import pg from 'pg';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import { acquireLock, publishSocketPath, readLiveLock, releaseLock } from './embedded-lock';
import { migrate, type MigrationResult } from './migrate';
import { PrismaClient } from './prisma';
import { registerBulkPool } from './bulk-sql';
import type { SqlExecutor } from './sql-executor';

export type DatabaseKind = 'postgres' | 'embedded' | 'embedded-socket';

export type Database = {
  kind: DatabaseKind;
  prisma: PrismaClient;
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
  /** Pool size for PostgreSQL. Default 10. */
  poolSize?: number;
  /** Called with a PostgreSQL pool once made (metrics watch it). */
  onPool?: (pool: pg.Pool) => void;
  /** Embedded only: PostgreSQL's shared buffers, in MiB (they count in the process's memory). Default 32. */
  embeddedSharedBuffersMb?: number;
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
    const database = await openPostgres(`postgresql://postgres@localhost:${SOCKET_PORT}/postgres?host=${encodeURIComponent(socketDir)}`, {
      ...options,
      poolSize: 1,
    });
    return { ...database, kind: 'embedded-socket' };
  }
  return openEmbedded(options);
}

async function openPostgres(databaseUrl: string, options: OpenDatabaseOptions): Promise<Database> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  pool.on('error', (error) => options.logger.warn({ event: 'database_pool_error', err: error }, 'idle database connection failed'));
  options.onPool?.(pool);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  registerBulkPool(prisma, pool);
  return {
    kind: 'postgres',
    prisma,
    executor: executorFor(pool),
    migrate: async () => {
      // The advisory lock and BEGIN/COMMIT belong to one session: keep one connection throughout.
      const connection = await pool.connect();
      try {
        return await migrateAndCheck(executorFor(connection));
      } finally {
        connection.release();
      }
    },
    close: async () => {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

function executorFor(queryable: pg.Pool | pg.PoolClient): SqlExecutor {
  return {
    query: async <Row>(sql: string, params?: unknown[]) => (await queryable.query(sql, params)).rows as Row[],
    exec: async (sql) => {
      await queryable.query(sql);
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

async function openEmbedded(options: OpenDatabaseOptions): Promise<Database> {
  acquireLock(options.dataDir);
  let socketServer: PGLiteSocketServer | null = null;
  let client: PGlite;
  try {
    client = await PGlite.create({
      dataDir: path.join(options.dataDir, 'pgdata'),
      extensions: { vector },
      // PostgreSQL's default 128 MB of shared buffers sits in the process's memory here; the
      // operating system caches the data files as well, so a smaller pool costs little.
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${options.embeddedSharedBuffersMb ?? 32}MB`],
    });
  } catch (error) {
    releaseLock(options.dataDir);
    throw new AppError({ code: 'INTERNAL', userMessage: `Cannot open the embedded database in ${options.dataDir}`, cause: error });
  }
  let socketDir: string | null = null;
  if (options.embeddedRole === 'owner') {
    // PGlite's socket takes any connection without a password: a Unix socket in a directory only
    // this user may enter (mkdtemp makes it 0700) keeps everyone else on the machine out. In the
    // temporary directory, because a socket path must be short (about 100 bytes).
    socketDir = mkdtempSync(path.join(os.tmpdir(), 'duo-pglite-'));
    chmodSync(socketDir, 0o700);
    const socketPath = path.join(socketDir, `.s.PGSQL.${SOCKET_PORT}`);
    socketServer = new PGLiteSocketServer({ db: client, path: socketPath, maxConnections: 4 });
    await socketServer.start();
    chmodSync(socketPath, 0o600);
    publishSocketPath(options.dataDir, socketPath);
  }
  const executor: SqlExecutor = {
    query: async (sql, params) => (await client.query(sql, params)).rows as never,
    exec: async (sql) => {
      await client.exec(sql);
    },
  };
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(client) });
  return {
    kind: 'embedded',
    prisma,
    executor,
    migrate: () => migrateAndCheck(executor),
    close: async () => {
      await prisma.$disconnect();
      await socketServer?.stop();
      if (socketDir) rmSync(socketDir, { recursive: true, force: true });
      await client.close();
      releaseLock(options.dataDir);
    },
  };
}
