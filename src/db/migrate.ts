import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../errors';
import { MIGRATIONS_DIR } from '../paths';
import type { SqlExecutor } from './sql-executor';

export type Migration = { name: string; sql: string; checksum: string };

export type MigrationResult = { applied: string[]; skipped: string[] };

export type MigrateOptions = {
  executor: SqlExecutor;
  /** Defaults to prisma/migrations, one <timestamp>_<name>/migration.sql per migration. */
  directory?: string;
};

// Same table and columns as Prisma Migrate, so `prisma migrate deploy` agrees where its engine exists.
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

// Any fixed number: it only has to be the same in every process that migrates this database.
const MIGRATION_LOCK_KEY = 72707369;

export async function loadMigrations(directory: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const entries = await readdir(directory, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory() && /^\d{14}_[a-z0-9_]+$/.test(entry.name))
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(directory, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

type AppliedRow = { migration_name: string; checksum: string; finished_at: Date | string | null; rolled_back_at: Date | string | null };

/**
 * Applies pending migrations in name order, each in its own transaction together with its record in
 * `_prisma_migrations`. Refuses to run when an applied migration's file has changed since, or when a
 * previous attempt failed half-way, because then the database no longer matches the files.
 */
export async function migrate(options: MigrateOptions): Promise<MigrationResult> {
  const { executor } = options;
  const migrations = await loadMigrations(options.directory);
  await executor.exec(CREATE_MIGRATIONS_TABLE);
  await executor.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  try {
    const rows = await executor.query<AppliedRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
    );
    const applied = new Map(rows.map((row) => [row.migration_name, row]));
    const result: MigrationResult = { applied: [], skipped: [] };
    for (const migration of migrations) {
      const previous = applied.get(migration.name);
      if (previous) {
        if (previous.finished_at === null) {
          throw migrationError(`Migration ${migration.name} failed earlier and was not finished; fix the database and mark it rolled back`);
        }
        if (previous.checksum !== migration.checksum) {
          throw migrationError(
            `Migration ${migration.name} was changed after it was applied (checksum ${previous.checksum.slice(0, 12)} in the database, ` +
              `${migration.checksum.slice(0, 12)} on disk); add a new migration instead`,
          );
        }
        result.skipped.push(migration.name);
        continue;
      }
      await applyOne(executor, migration);
      result.applied.push(migration.name);
    }
    return result;
  } finally {
    await executor.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
  }
}

async function applyOne(executor: SqlExecutor, migration: Migration): Promise<void> {
  // The record and the migration commit together: a process killed half-way (a start interrupted during its
  // migrations) leaves neither, and the next start applies the migration again, instead of a record that
  // says it never finished and stops every start from then on.
  await executor.exec('BEGIN');
  try {
    const id = randomUUID();
    await executor.query(
      'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)',
      [id, migration.checksum, migration.name],
    );
    await executor.exec(migration.sql);
    await executor.query('UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1', [id]);
    await executor.exec('COMMIT');
  } catch (error) {
    await executor.exec('ROLLBACK').catch(() => undefined);
    // A migration that fails by itself is recorded (unfinished, with why) and stops the next start until it is resolved.
    // Not when the connection is gone: then this fails too, and the migration's own error is the one to report.
    await executor
      .query('INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, logs) VALUES ($1, $2, $3, now(), $4)', [
        randomUUID(),
        migration.checksum,
        migration.name,
        String(error),
      ])
      .catch(() => undefined);
    throw migrationError(`Migration ${migration.name} failed: ${(error as Error).message}`, error);
  }
}

function migrationError(message: string, cause?: unknown): AppError {
  return new AppError({ code: 'INTERNAL', userMessage: message, cause });
}
