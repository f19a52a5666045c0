import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
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

/**
 * Renames a new database into place as `pgdata`, its files on disk first: PGlite's initdb does not sync them, and
 * a rename that reached the disk before them would put a directory of empty files in place after a power cut.
 */
export async function moveIntoPlace(temporary: string, pgdata: string): Promise<void> {
  const files: string[] = [];
  const directories: string[] = [];
  collect(temporary, files, directories);
  // About 1,100 files: one after the other they took 4 s on a test machine, several at once 0.2 s.
  await syncAll(files);
  await syncAll(directories);
  renameSync(temporary, pgdata);
  await syncAll([path.dirname(pgdata)]);
}

function collect(directory: string, files: string[], directories: string[]): void {
  directories.push(directory);
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const entryPath = path.join(directory, entry.name);
    if (entry.isDirectory()) collect(entryPath, files, directories);
    else if (entry.isFile()) files.push(entryPath);
  }
}

// A batch at a time, so that no more than that many descriptors are open at once.
const SYNC_BATCH = 64;

async function syncAll(paths: string[]): Promise<void> {
  for (let start = 0; start < paths.length; start += SYNC_BATCH) {
    await Promise.all(
      paths.slice(start, start + SYNC_BATCH).map(async (target) => {
        const handle = await open(target, 'r');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
      }),
    );
  }
}
