import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';

/**
 * Where the embedded database's files are, and how a new one gets there. PGlite would initialise a
 * new data directory in place, writing PG_VERSION before postgresql.conf: a start killed between the
 * two leaves a directory that looks made and never opens again. So a new database is made beside
 * it, under a name of its own, and renamed into place only once PGlite has opened and closed it: the
 * `pgdata` directory is either absent or whole. No PGlite import here: the main thread reads these
 * names without loading it.
 */

/** PostgreSQL's data directory under DATA_DIR. */
export const pgdataPath = (dataDir: string) => path.join(dataDir, 'pgdata');

const INITIALISING = '.initialising-';
const INCOMPLETE = '.incomplete-';

/** Where a new database is made before it is renamed to `pgdata`; one per process. */
export const initialisingPath = (pgdata: string) => `${pgdata}${INITIALISING}${process.pid}`;

/** A data directory PostgreSQL would open (rather than initialise): it has its PG_VERSION. */
export const hasDatabase = (pgdata: string) => existsSync(path.join(pgdata, 'PG_VERSION'));

/**
 * Before a new database is made: removes what interrupted initialisations left beside `pgdata` (never
 * renamed into place, so never opened by the service). The caller holds the data directory's lock,
 * so no other process is initialising one.
 */
export function removeUnfinishedInitialisations(pgdata: string): void {
  const parent = path.dirname(pgdata);
  const prefix = `${path.basename(pgdata)}${INITIALISING}`;
  for (const entry of readdirSync(parent)) {
    if (entry.startsWith(prefix)) rmSync(path.join(parent, entry), { recursive: true, force: true });
  }
}

/**
 * A `pgdata` without PG_VERSION holds no database (an earlier version's interrupted initialisation,
 * or a directory made by hand): it is renamed aside, not deleted, and its new name returned.
 */
export function setAsideIncomplete(pgdata: string): string | null {
  if (!existsSync(pgdata) || hasDatabase(pgdata)) return null;
  const aside = `${pgdata}${INCOMPLETE}${new Date().toISOString().replace(/[:.]/g, '-')}`;
  renameSync(pgdata, aside);
  return aside;
}
