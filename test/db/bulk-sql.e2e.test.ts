import { poolRows, withBulkTransaction } from '../../src/db/bulk-sql';
import type { Database } from '../../src/db/database';
import { createTestDatabase, openTestDatabase, type TestDatabase } from '../helpers/test-database';

// Large index writes go straight to PostgreSQL's pool, in a transaction of their own.
describe('bulk transactions on the PostgreSQL pool', () => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    database = await openTestDatabase(testDatabase, { poolSize: 2 });
    await database.prisma.$executeRawUnsafe('CREATE TABLE bulk_probe (value text NOT NULL)');
  });
  afterAll(async () => {
    await database.close();
    await testDatabase.drop();
  });

  const values = async () =>
    (await database.prisma.$queryRawUnsafe<Array<{ value: string }>>('SELECT value FROM bulk_probe ORDER BY value')).map(
      (row) => row.value,
    );

  it('commits what the work wrote, with arrays and nulls as parameters', async () => {
    const done = await withBulkTransaction(database.prisma, { timeoutMs: 60_000 }, async (statement) => {
      await statement('INSERT INTO bulk_probe SELECT coalesce(v, $2) FROM unnest($1::text[]) AS v', [['a', null, 'c"{,}\\'], 'b']);
      return 'done';
    });
    expect(done).toEqual({ value: 'done' });
    expect(await values()).toEqual(['a', 'b', 'c"{,}\\']);
  });

  it('rolls everything back when the work fails, and the pool stays usable', async () => {
    await expect(
      withBulkTransaction(database.prisma, { timeoutMs: 60_000 }, async (statement) => {
        await statement("INSERT INTO bulk_probe VALUES ('rolled back')");
        await statement('SELECT * FROM no_such_table');
      }),
    ).rejects.toThrow(/no_such_table/);
    expect(await values()).not.toContain('rolled back');
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect(await withBulkTransaction(database.prisma, { timeoutMs: 60_000 }, async (statement) => statement('SELECT 1'))).toBeDefined();
    }
  });

  it('fails the work, not the process, when its backend is ended mid-statement or between statements; the pool goes on', async () => {
    const terminate = (pid: number) => database.prisma.$queryRawUnsafe('SELECT pg_terminate_backend($1::int)', pid);
    const backendOf = async (statement: (sql: string) => Promise<unknown>) =>
      ((await statement('SELECT pg_backend_pid() AS pid')) as { rows: Array<{ pid: number }> }).rows[0].pid;
    // Mid-statement: the backend ends while it runs one.
    await expect(
      withBulkTransaction(database.prisma, { timeoutMs: 60_000 }, async (statement) => {
        const pid = await backendOf(statement);
        // A Prisma query runs once it is awaited (or then'd): a plain `void` would never send it.
        setTimeout(() => terminate(pid).then(() => undefined), 100);
        await statement('SELECT pg_sleep(5)');
      }),
    ).rejects.toThrow(/terminat/i);
    // Between statements: the connection raises its error while the work does something else.
    await expect(
      withBulkTransaction(database.prisma, { timeoutMs: 60_000 }, async (statement) => {
        await terminate(await backendOf(statement));
        await new Promise((resolve) => setTimeout(resolve, 200));
        await statement('SELECT 1');
      }),
    ).rejects.toThrow();
    // An unhandled 'error' event would have ended the test process above; the pool replaced both connections.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect(await withBulkTransaction(database.prisma, { timeoutMs: 60_000 }, async (statement) => statement('SELECT 1'))).toBeDefined();
    }
  });

  it('answers undefined, running nothing, for a client openDatabase did not make (no pool known)', async () => {
    let ran = false;
    expect(await withBulkTransaction({}, { timeoutMs: 60_000 }, async () => (ran = true))).toBeUndefined();
    expect(ran).toBe(false);
  });
  it('reads straight on the pool, a bigint parameter as text; undefined for a client with no pool known', async () => {
    expect(await poolRows(database.prisma, 'SELECT $1::bigint + 1 AS next, $2::text AS label', [9007199254740993n, 'x'])).toEqual([
      { next: '9007199254740994', label: 'x' },
    ]);
    expect(await poolRows({}, 'SELECT 1', [])).toBeUndefined();
  });
});
