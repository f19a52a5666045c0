import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import threads from 'node:worker_threads';
import pg from 'pg';
import pino from 'pino';
import { openDatabase, type Database } from '../../src/db/database';
import { createLogger } from '../../src/logger';
import { createUser } from '../../src/users/users.service';

const logger = createLogger('silent');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// PGlite runs in a thread of its own and is ONE session: the service's pool and admin connections
// reach it through its socket and must take turns by transaction, never see each other's uncommitted rows.
describe('embedded database in its own thread', () => {
  let dataDir: string;
  let database: Database;
  let socketDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-embedded-db-'));
    database = await openDatabase({ databaseUrl: undefined, dataDir, logger, embeddedRole: 'owner' });
    await database.migrate();
    const lock = JSON.parse(readFileSync(path.join(dataDir, 'pglite.lock'), 'utf8')) as { socketPath: string };
    socketDir = path.dirname(lock.socketPath);
  }, 120_000);
  afterAll(async () => {
    await database?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const connect = async () => {
    const client = new pg.Client({ host: socketDir, port: 5432, user: 'postgres', database: 'postgres' });
    await client.connect();
    return client;
  };
  const count = (prisma: Pick<Database['prisma'], 'user'>, username: string) => prisma.user.count({ where: { username } });

  it('keeps one transaction from seeing another one uncommitted rows, whichever connection asks', async () => {
    let inserted!: () => void;
    const insertedYet = new Promise<void>((resolve) => (inserted = resolve));
    const first = database.prisma
      .$transaction(async (tx) => {
        await tx.user.create({ data: { username: 'uncommitted', name: 'u', email: 'uncommitted@example.com' } });
        inserted();
        await sleep(300);
        expect(await count(tx, 'uncommitted')).toBe(1);
        throw new Error('roll back');
      })
      .catch((error: Error) => error.message);
    await insertedYet;
    const admin = await connect();
    try {
      // Another transaction, a statement outside any, and an admin connection all wait for the first to end.
      const [other, outside, viaSocket, firstOutcome] = await Promise.all([
        database.prisma.$transaction(async (tx) => count(tx, 'uncommitted')),
        count(database.prisma, 'uncommitted'),
        admin.query('SELECT count(*)::int AS n FROM users WHERE username = $1', ['uncommitted']),
        first,
      ]);
      expect(firstOutcome).toBe('roll back');
      expect(other).toBe(0);
      expect(outside).toBe(0);
      expect(viaSocket.rows).toEqual([{ n: 0 }]);
    } finally {
      await admin.end();
    }
  });

  it('runs concurrent transactions whole, one after the other, each committing its own rows', async () => {
    const names = Array.from({ length: 6 }, (_, index) => `concurrent-${index}`);
    const seen = await Promise.all(
      names.map((username) =>
        database.prisma.$transaction(async (tx) => {
          const before = await tx.user.count({ where: { username: { startsWith: 'concurrent-' } } });
          await tx.user.create({ data: { username, name: username, email: `${username}@example.com` } });
          await sleep(20);
          const after = await tx.user.count({ where: { username: { startsWith: 'concurrent-' } } });
          return after - before;
        }),
      ),
    );
    expect(seen).toEqual(names.map(() => 1));
    expect(await database.prisma.user.count({ where: { username: { startsWith: 'concurrent-' } } })).toBe(names.length);
  });

  it('rolls back the transaction of a connection that goes away, and lets the others go on', async () => {
    const admin = await connect();
    admin.on('error', () => undefined); // it is cut off below, on purpose
    await admin.query('BEGIN');
    await admin.query("INSERT INTO users (username, name, email) VALUES ('abandoned', 'a', 'abandoned@example.com')");
    const waiting = count(database.prisma, 'abandoned');
    await sleep(100);
    (admin as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    expect(await waiting).toBe(0);
    expect(await count(database.prisma, 'abandoned')).toBe(0);
  });

  it('still recognises a unique violation (CONFLICT)', async () => {
    await createUser(database.prisma, { username: 'twice' });
    await expect(createUser(database.prisma, { username: 'twice' })).rejects.toMatchObject({ code: 'CONFLICT' });
    // The failed statement left no transaction behind.
    expect(await count(database.prisma, 'twice')).toBe(1);
  });

  it("serves the socket only to its owner's user", () => {
    expect(statSync(socketDir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(socketDir, '.s.PGSQL.5432')).mode & 0o077).toBe(0);
  });
});

describe('embedded database thread dying', () => {
  it('fails loudly: the failure is reported and queries fail instead of waiting', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-embedded-dies-'));
    const started: threads.Worker[] = [];
    const RealWorker = threads.Worker;
    const spy = jest.spyOn(threads, 'Worker').mockImplementation((...args: ConstructorParameters<typeof threads.Worker>) => {
      const worker = new RealWorker(...args);
      started.push(worker);
      return worker;
    });
    const failures: Error[] = [];
    let database: Database | null = null;
    try {
      database = await openDatabase({
        databaseUrl: undefined,
        dataDir,
        logger,
        embeddedRole: 'owner',
        onFailure: (error) => failures.push(error),
      });
      spy.mockRestore();
      expect(await database.prisma.$queryRawUnsafe('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      expect(started).toHaveLength(1);
      await started[0].terminate();
      await sleep(50);
      expect(failures).toHaveLength(1);
      await expect(database.prisma.$queryRawUnsafe('SELECT 1 AS one')).rejects.toThrow();
      await database.close();
      database = null;
      // Closed, the directory is free again.
      expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
    } finally {
      spy.mockRestore();
      await database?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

// What an earlier version's interrupted first start left (PGlite made pgdata in place): directories, no PG_VERSION.
describe('embedded database over a pgdata that holds no database', () => {
  it('moves it aside, not deleting it, and makes a new database', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-embedded-incomplete-'));
    mkdirSync(path.join(dataDir, 'pgdata', 'global'), { recursive: true });
    writeFileSync(path.join(dataDir, 'pgdata', 'global', 'pg_control'), 'half-written');
    const warnings: unknown[] = [];
    const recording = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    let database: Database | null = null;
    try {
      database = await openDatabase({ databaseUrl: undefined, dataDir, logger: recording, embeddedRole: 'owner' });
      expect(await database.prisma.$queryRawUnsafe('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      expect(existsSync(path.join(dataDir, 'pgdata', 'PG_VERSION'))).toBe(true);
      const aside = readdirSync(dataDir).filter((entry) => entry.startsWith('pgdata.incomplete-'));
      expect(aside).toHaveLength(1);
      expect(readFileSync(path.join(dataDir, aside[0], 'global', 'pg_control'), 'utf8')).toBe('half-written');
      expect(warnings).toEqual([expect.objectContaining({ event: 'embedded_database_set_aside', setAside: path.join(dataDir, aside[0]) })]);
    } finally {
      await database?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
