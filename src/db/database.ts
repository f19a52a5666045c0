import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import pg from 'pg';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import { acquireLock, publishSocketPort, readLiveLock, releaseLock } from './embedded-lock';
import { migrate, type MigrationResult } from './migrate';
import { PrismaClient } from './prisma';
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
  /** Embedded owner only: port of the socket for admin commands, 0 picks a free one. Default 0. */
  socketPort?: number;
  /** Pool size for PostgreSQL. Default 10. */
  poolSize?: number;
  /** Embedded only: PostgreSQL's shared buffers, in MiB (they count in the process's memory). Default 32. */
  embeddedSharedBuffersMb?: number;
};

const MIN_PGVECTOR = [0, 8];

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  const owner = options.embeddedRole === 'client' ? readLiveLock(options.dataDir) : null;
  if (owner?.socketPort) {
    options.logger.debug({ event: 'embedded_database_via_socket', pid: owner.pid }, 'using the running service database');
    const database = await openPostgres(`postgresql://postgres@127.0.0.1:${owner.socketPort}/postgres`, { ...options, poolSize: 1 });
    return { ...database, kind: 'embedded-socket' };
  }
  return openEmbedded(options);
}

async function openPostgres(databaseUrl: string, options: OpenDatabaseOptions): Promise<Database> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  pool.on('error', (error) => options.logger.warn({ event: 'database_pool_error', err: error }, 'idle database connection failed'));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
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
    query: async (sql, params) => (await queryable.query(sql, params)).rows,
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
        'The PostgreSQL server has no pgvector extension. Install it (bash scripts/install-pgvector.sh builds it from Debian\'s source package) or leave DATABASE_URL unset to use the embedded database.',
    });
  }
  const result = await migrate({ executor });
  const [installed] = await executor.query<{ version: string }>("SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'");
  const [major = 0, minor = 0] = (installed?.version ?? '0.0').split('.').map(Number);
  if (major < MIN_PGVECTOR[0]! || (major === MIN_PGVECTOR[0] && minor < MIN_PGVECTOR[1]!)) {
    throw new AppError({
      code: 'INTERNAL',
      userMessage: `pgvector ${installed?.version ?? 'unknown'} is too old: duo-slice needs ${MIN_PGVECTOR.join('.')} or newer (ALTER EXTENSION vector UPDATE after installing it).`,
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
  if (options.embeddedRole === 'owner') {
    socketServer = new PGLiteSocketServer({ db: client, host: '127.0.0.1', port: options.socketPort ?? 0, maxConnections: 4 });
    await socketServer.start();
    const address = socketServer.getServerConn();
    publishSocketPort(options.dataDir, Number(address.split(':').pop()));
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
      await client.close();
      releaseLock(options.dataDir);
    },
  };
}
