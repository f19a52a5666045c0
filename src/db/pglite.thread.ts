// The body of the embedded database's thread (database.ts): PGlite and the Unix socket the service
// and admin commands reach it through. Every statement runs in WebAssembly here, so none holds up the
// main thread's event loop. Loads PGlite, pgvector and the socket server, nothing else.
import { existsSync } from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { embeddedStartParams } from './embedded-settings';
import { servePGlite, type PGliteServer } from './pglite-server';

export type PGliteThreadData = { pgdata: string; socketPath: string; sharedBuffersMb: number };
/** To the thread: 'close'. From it: */
export type PGliteThreadReply = { type: 'ready' } | { type: 'failed'; message: string; stack?: string } | { type: 'closed' };

const port = parentPort;

// A new data directory is made with initdb, whose WebAssembly memory (~400 MiB) is garbage once the
// database is open; this thread allocates too little afterwards for V8 to collect it soon, so it is
// collected once, here. (Worker threads cannot be started with --expose-gc.)
function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

async function open(data: PGliteThreadData): Promise<{ db: PGlite; server: PGliteServer }> {
  const initdb = !existsSync(path.join(data.pgdata, 'PG_VERSION'));
  const db = await PGlite.create({
    dataDir: data.pgdata,
    extensions: { vector },
    startParams: embeddedStartParams(PGlite.defaultStartParams, data.sharedBuffersMb),
  });
  if (initdb) collectGarbage();
  try {
    return { db, server: await servePGlite(db, data.socketPath) };
  } catch (error) {
    await db.close();
    throw error;
  }
}

if (port) {
  open(workerData as PGliteThreadData).then(
    ({ db, server }) => {
      port.once('message', () => {
        void (async () => {
          await server.close();
          await db.close();
          port.postMessage({ type: 'closed' } satisfies PGliteThreadReply);
          port.close();
        })();
      });
      port.postMessage({ type: 'ready' } satisfies PGliteThreadReply);
    },
    (error: unknown) => {
      const failure = error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
      port.postMessage({ type: 'failed', ...failure } satisfies PGliteThreadReply);
      port.close();
    },
  );
}
