// The body of the embedded database's thread (database.ts): PGlite and the Unix socket the service
// and admin commands reach it through. Every statement runs in WebAssembly here, so none holds up the
// main thread's event loop. Loads PGlite, pgvector and the socket server, nothing else.
import v8 from 'node:v8';
import vm from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { hasDatabase, initialisingPath, moveIntoPlace, removeUnfinishedInitialisations, setAsideIncomplete } from './embedded-data-dir';
import { embeddedStartParams } from './embedded-settings';
import { servePGlite, type PGliteServer } from './pglite-server';

export type PGliteThreadData = { pgdata: string; socketPath: string; sharedBuffersMb: number };
/** To the thread: 'close'. From it: */
export type PGliteThreadReply =
  /** `setAside`: where a `pgdata` that held no database was moved before a new one was made (embedded-data-dir.ts). */
  | { type: 'ready'; setAside: string | null }
  /** `postgresLog`: PostgreSQL's last lines on stderr, which say why where PGlite's own message does not. */
  | { type: 'failed'; message: string; stack?: string; postgresLog: string[] }
  | { type: 'closed' };

const port = parentPort;

// A new data directory is made with initdb, whose WebAssembly memory (~400 MiB) is garbage once the
// new database is made; this thread allocates too little afterwards for V8 to collect it soon, so it is
// collected once, here. (Worker threads cannot be started with --expose-gc.)
function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

// PostgreSQL's last words on stderr: PGlite's error for a directory that does not open is only "PGlite
// failed to initialize properly", the reason (a missing file, a damaged control file) is printed there.
const POSTGRES_LOG_LINES = 20;
const PGLITE_PGDATA = '/pglite/data';
const postgresLog: string[] = [];
// PGlite prints the line as well whatever this returns. PostgreSQL names its files under PGlite's mount point.
function keepPostgresLog(line: string): boolean {
  postgresLog.push(line.replaceAll(`${PGLITE_PGDATA}/`, `${(workerData as PGliteThreadData).pgdata}/`));
  if (postgresLog.length > POSTGRES_LOG_LINES) postgresLog.shift();
  return false;
}

/** A new database, made beside `pgdata` and renamed into place once whole (embedded-data-dir.ts). */
async function initialise(data: PGliteThreadData): Promise<void> {
  removeUnfinishedInitialisations(data.pgdata);
  const temporary = initialisingPath(data.pgdata);
  const fresh = await PGlite.create({
    dataDir: temporary,
    startParams: embeddedStartParams(PGlite.defaultStartParams, data.sharedBuffersMb),
    onStderr: keepPostgresLog,
  });
  await fresh.close();
  await moveIntoPlace(temporary, data.pgdata);
  collectGarbage();
}

async function open(data: PGliteThreadData): Promise<{ db: PGlite; server: PGliteServer; setAside: string | null }> {
  const setAside = setAsideIncomplete(data.pgdata);
  if (!hasDatabase(data.pgdata)) await initialise(data);
  const db = await PGlite.create({
    dataDir: data.pgdata,
    extensions: { vector },
    startParams: embeddedStartParams(PGlite.defaultStartParams, data.sharedBuffersMb),
    onStderr: keepPostgresLog,
  });
  try {
    return { db, server: await servePGlite(db, data.socketPath), setAside };
  } catch (error) {
    await db.close();
    throw error;
  }
}

if (port) {
  open(workerData as PGliteThreadData).then(
    ({ db, server, setAside }) => {
      port.once('message', () => {
        void (async () => {
          await server.close();
          await db.close();
          port.postMessage({ type: 'closed' } satisfies PGliteThreadReply);
          port.close();
        })();
      });
      port.postMessage({ type: 'ready', setAside } satisfies PGliteThreadReply);
    },
    (error: unknown) => {
      const failure = error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
      port.postMessage({ type: 'failed', ...failure, postgresLog } satisfies PGliteThreadReply);
      port.close();
    },
  );
}
