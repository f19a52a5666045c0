import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import { openDatabase, type Database, type OpenDatabaseOptions } from '../../src/db/database';
import { createLogger } from '../../src/logger';
import { ensureTemplateDatabase } from './template-database';
import { databaseUrl, templateDatabaseName, TEST_ADMIN_DATABASE_URL } from './test-env';

export type TestDatabase = { name: string; url: string; drop(): Promise<void> };

async function withAdmin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_ADMIN_DATABASE_URL });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Whether this process has seen the template exist (checked once per process). */
let templateReady: Promise<void> | null = null;

/** A database of this test file's own, copied from the migrated template (or empty). */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const name = `duo_test_${randomBytes(6).toString('hex')}`;
  if (!options.empty) {
    templateReady ??= withAdmin(ensureTemplateDatabase).catch((error: unknown) => {
      templateReady = null;
      throw error;
    });
    await templateReady;
  }
  await withAdmin((client) =>
    client.query(options.empty ? `CREATE DATABASE "${name}"` : `CREATE DATABASE "${name}" TEMPLATE "${templateDatabaseName()}"`),
  );
  return {
    name,
    url: databaseUrl(name),
    drop: () => withAdmin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}

/** The service's own client (Prisma over a `pg` pool) on a test database, as an admin command opens it, without logs. */
export function openTestDatabase(
  database: Pick<TestDatabase, 'url'>,
  options: Partial<Pick<OpenDatabaseOptions, 'dataDir' | 'poolSize' | 'onPool'>> = {},
): Promise<Database> {
  return openDatabase({
    dataDir: os.tmpdir(),
    ...options,
    databaseUrl: database.url,
    logger: createLogger('silent'),
    embeddedRole: 'client',
  });
}
