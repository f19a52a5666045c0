import { cpSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadMigrations, migrate } from '../../src/db/migrate';
import type { SqlExecutor } from '../../src/db/sql-executor';
import { MIGRATIONS_DIR } from '../../src/paths';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database';
import { waitUntil } from '../helpers/wait';

describe('migration runner', () => {
  let database: TestDatabase;
  let client: pg.Client;
  let executor: SqlExecutor;
  let directory: string;

  beforeAll(async () => {
    database = await createTestDatabase({ empty: true });
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    executor = {
      query: async (sql, params) => (await client.query(sql, params)).rows,
      exec: async (sql) => {
        await client.query(sql);
      },
    };
    directory = mkdtempSync(path.join(os.tmpdir(), 'duo-migrations-'));
    cpSync(MIGRATIONS_DIR, directory, { recursive: true });
  });
  afterAll(async () => {
    await client.end();
    await database.drop();
    rmSync(directory, { recursive: true, force: true });
  });

  const addMigration = (name: string, sql: string) => {
    mkdirSync(path.join(directory, name));
    writeFileSync(path.join(directory, name, 'migration.sql'), sql);
  };

  it('applies every migration on an empty database, creating the vector extension first', async () => {
    const shipped = (await loadMigrations(directory)).map((migration) => migration.name);
    expect(shipped[0]).toBe('20261122000000_init');
    const result = await migrate({ executor, directory });
    expect(result.applied).toEqual(shipped);
    const { rows } = await client.query("SELECT extversion FROM pg_extension WHERE extname = 'vector'");
    expect(rows[0].extversion.split('.').map(Number)[1]).toBeGreaterThanOrEqual(8);
    const recorded = await client.query(
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name',
    );
    expect(recorded.rows).toEqual(
      shipped.map((name) => ({
        migration_name: name,
        checksum: expect.stringMatching(/^[0-9a-f]{64}$/),
        finished_at: expect.any(Date),
        applied_steps_count: 1,
      })),
    );
  });

  it('skips what is applied and applies only the new one', async () => {
    addMigration('20991122000001_add_note', 'CREATE TABLE "notes" ("id" SERIAL PRIMARY KEY, "body" TEXT NOT NULL);');
    const result = await migrate({ executor, directory });
    expect(result.applied).toEqual(['20991122000001_add_note']);
    expect(result.skipped).toEqual(
      (await loadMigrations(directory)).map((migration) => migration.name).filter((name) => name !== '20991122000001_add_note'),
    );
    expect((await migrate({ executor, directory })).applied).toEqual([]);
  });

  it('refuses a migration whose file changed after it was applied', async () => {
    writeFileSync(path.join(directory, '20991122000001_add_note', 'migration.sql'), 'CREATE TABLE "notes" ("id" SERIAL PRIMARY KEY);');
    await expect(migrate({ executor, directory })).rejects.toThrow(/20991122000001_add_note was changed after it was applied/);
  });

  it('rolls back a failing migration whole, records the failure, and refuses to go on until it is resolved', async () => {
    writeFileSync(
      path.join(directory, '20991122000001_add_note', 'migration.sql'),
      'CREATE TABLE "notes" ("id" SERIAL PRIMARY KEY, "body" TEXT NOT NULL);',
    );
    addMigration('20991122000002_broken', 'CREATE TABLE "half" ("id" INT);\nSELECT no_such_function();');
    await expect(migrate({ executor, directory })).rejects.toThrow(/20991122000002_broken failed/);
    const { rows } = await client.query("SELECT to_regclass('half') AS half");
    expect(rows[0].half).toBeNull();
    const failed = await client.query(`SELECT finished_at, logs FROM "_prisma_migrations" WHERE migration_name = '20991122000002_broken'`);
    expect(failed.rows[0].finished_at).toBeNull();
    expect(failed.rows[0].logs).toContain('no_such_function');
    await expect(migrate({ executor, directory })).rejects.toThrow(/failed earlier and was not finished/);
  });
});

// A start killed during its migrations (a supervisor's SIGKILL, `timeout`) must not leave a database that no later start accepts.
describe('migration runner, interrupted', () => {
  let database: TestDatabase;
  let directory: string;

  beforeAll(async () => {
    database = await createTestDatabase({ empty: true });
    directory = mkdtempSync(path.join(os.tmpdir(), 'duo-migrations-interrupted-'));
    mkdirSync(path.join(directory, '20991122000001_slow'));
    writeFileSync(
      path.join(directory, '20991122000001_slow', 'migration.sql'),
      'CREATE TABLE "slow" ("id" INT);\nSELECT pg_sleep(1.5);\nCREATE TABLE "after_sleep" ("id" INT);',
    );
  });
  afterAll(async () => {
    await database.drop();
    rmSync(directory, { recursive: true, force: true });
  });

  const connect = async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const executor: SqlExecutor = {
      query: async (sql, params) => (await client.query(sql, params)).rows,
      exec: async (sql) => {
        await client.query(sql);
      },
    };
    return { client, executor };
  };

  it('leaves no record of a migration whose process died half-way, so the next run applies it', async () => {
    const doomed = await connect();
    doomed.client.on('error', () => undefined); // it is cut off below, on purpose
    const running = migrate({ executor: doomed.executor, directory }).catch((error: Error) => error);
    const admin = await connect();
    try {
      // The migration is under way (its first table made, uncommitted) when its process goes.
      await waitUntil(
        async () =>
          (await admin.client.query("SELECT 1 FROM pg_stat_activity WHERE query LIKE '%pg_sleep(1.5)%' AND pid <> pg_backend_pid()"))
            .rowCount === 1,
        { what: 'the migration to be under way', timeoutMs: 10_000, intervalMs: 20 },
      );
      await admin.client.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(1.5)%' AND pid <> pg_backend_pid()",
      );
      expect(await running).toBeInstanceOf(Error);
      const recorded = await admin.client.query('SELECT migration_name FROM "_prisma_migrations"');
      expect(recorded.rows).toEqual([]);

      const result = await migrate({ executor: admin.executor, directory });
      expect(result.applied).toEqual(['20991122000001_slow']);
      const { rows } = await admin.client.query("SELECT to_regclass('slow') AS slow, to_regclass('after_sleep') AS after_sleep");
      expect(rows[0]).toEqual({ slow: 'slow', after_sleep: 'after_sleep' });
    } finally {
      await admin.client.end();
      await doomed.client.end().catch(() => undefined);
    }
  }, 30_000);
});
