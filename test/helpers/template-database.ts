import pg from 'pg';
import { migrate } from '../../src/db/migrate';
import { databaseUrl, templateDatabaseName } from './test-env';

/**
 * Builds the migrated template database of the current migrations unless it exists (its name
 * carries their digest, so a new migration means a new template). Jest's global setup calls it
 * before any test; createTestDatabase calls it too, for a bench run before any test on this machine.
 */
export async function ensureTemplateDatabase(admin: pg.Client): Promise<void> {
  const template = templateDatabaseName();
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
  if (exists.rows.length > 0) return;
  const building = `${template}_${process.pid}`;
  await admin.query(`CREATE DATABASE "${building}"`);
  const client = new pg.Client({ connectionString: databaseUrl(building) });
  await client.connect();
  try {
    await migrate({
      executor: {
        query: async (sql, params) => (await client.query(sql, params)).rows,
        exec: async (sql) => {
          await client.query(sql);
        },
      },
    });
  } finally {
    await client.end();
  }
  // Another process may have built it meanwhile: keep theirs.
  await admin.query(`ALTER DATABASE "${building}" RENAME TO "${template}"`).catch(async () => {
    await admin.query(`DROP DATABASE IF EXISTS "${building}"`);
  });
  await admin.query(`ALTER DATABASE "${template}" WITH IS_TEMPLATE true`).catch(() => undefined);
}
