import { chmodSync } from 'node:fs';
import net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

/**
 * PGlite behind PostgreSQL's wire protocol on a Unix socket, for the service's pool and admin
 * commands (`pg`). PGlite is ONE session: a connection holds it from its first message until PGlite
 * is idle again (a Sync or simple Query outside a transaction block), so another connection's
 * statements never run inside its transaction or between the Parse and Sync of its query. The others
 * wait their turn, in the order their messages came. (@electric-sql/pglite-socket takes turns by
 * message, which lets two connections' extended-protocol messages interleave.)
 */
export type PGliteServer = {
  /** Refuses new connections, drops the open ones and waits for the statement running now. */
  close(): Promise<void>;
};

export type PGliteServerOptions = {
  /** Connections at once. Default 32. */
  maxConnections?: number;
  /** PGlite itself failed (not an SQL error: those go to the client); its state is unknown. Default: thrown, uncaught. */
  onFatal?: (error: unknown) => void;
};

type Connection = {
  socket: net.Socket;
  buffer: Buffer;
  /** The start-up message was answered: messages now have a type byte. */
  started: boolean;
  closed: boolean;
  /** Sent extended-protocol messages without their Sync yet. */
  midExchange: boolean;
};

type Unit = { kind: 'reply'; bytes: Buffer } | { kind: 'end' } | { kind: 'statements'; bytes: Buffer; startup: boolean; complete: boolean };

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const PROTOCOL_3 = 196608;
// A message longer than this is a broken client, not a statement (PostgreSQL's own limit is 1 GiB).
const MAX_MESSAGE_BYTES = 1 << 30;
const NO_ENCRYPTION = Buffer.from('N');
const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);
const ROLLBACK = simpleQuery('ROLLBACK');

function simpleQuery(sql: string): Buffer {
  const text = Buffer.from(`${sql}\0`);
  const message = Buffer.alloc(5 + text.length);
  message.write('Q', 0);
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
}

/** The length of the whole message at the start of the buffer, null when it has not all arrived; throws on nonsense. */
function messageLength(connection: Connection, from: number): number | null {
  const { buffer } = connection;
  const header = connection.started ? 5 : 4;
  if (buffer.length - from < header) return null;
  const declared = connection.started ? buffer.readInt32BE(from + 1) : buffer.readInt32BE(from);
  if (declared < 4 || declared > MAX_MESSAGE_BYTES) throw new Error(`a message of ${declared} bytes`);
  const length = connection.started ? declared + 1 : declared;
  return buffer.length - from >= length ? length : null;
}

/**
 * The next thing to do for a connection, taken off its buffer: before start-up one message; after it,
 * the messages up to and including the next Sync or Query (one exchange, run in one call).
 */
function takeUnit(connection: Connection): Unit | null {
  if (!connection.started) {
    const length = messageLength(connection, 0);
    if (length === null) return null;
    const message = connection.buffer.subarray(0, length);
    connection.buffer = connection.buffer.subarray(length);
    const code = length >= 8 ? message.readInt32BE(4) : 0;
    if (code === SSL_REQUEST || code === GSSENC_REQUEST) return { kind: 'reply', bytes: NO_ENCRYPTION };
    // No backend to signal (CancelRequest), or not protocol 3: nothing this server can answer.
    if (code !== PROTOCOL_3) return { kind: 'end' };
    return { kind: 'statements', bytes: Buffer.from(message), startup: true, complete: true };
  }
  let end = 0;
  let complete = false;
  while (!complete) {
    const length = messageLength(connection, end);
    if (length === null) break;
    const type = String.fromCharCode(connection.buffer[end]);
    if (type === 'X') {
      if (end > 0) break;
      connection.buffer = connection.buffer.subarray(length);
      return { kind: 'end' };
    }
    end += length;
    complete = type === 'S' || type === 'Q';
  }
  if (end === 0) return null;
  const bytes = Buffer.from(connection.buffer.subarray(0, end));
  connection.buffer = connection.buffer.subarray(end);
  return { kind: 'statements', bytes, startup: false, complete };
}

export async function servePGlite(db: PGlite, socketPath: string, options: PGliteServerOptions = {}): Promise<PGliteServer> {
  const onFatal =
    options.onFatal ??
    ((error: unknown) =>
      setImmediate(() => {
        throw error;
      }));
  const connections = new Set<Connection>();
  // The connection PGlite is busy with (in a transaction, or between the messages of one exchange).
  let owner: Connection | null = null;
  // Connections with messages waiting, in the order they arrived.
  const ready: Connection[] = [];
  let running: Promise<void> | null = null;
  let failed = false;

  const write = (connection: Connection, data: Uint8Array) => {
    // PGlite hands out a view of its own buffer, reused by the next statement: copy it.
    if (!connection.closed && data.length > 0) connection.socket.write(Buffer.from(data));
  };
  const discard = () => undefined;

  // A connection that went away while PGlite was busy with it leaves no half-done exchange or open transaction behind.
  const reset = async (connection: Connection) => {
    if (connection.midExchange) await db.execProtocolRawStream(SYNC, { onRawData: discard });
    if (db.isInTransaction()) await db.execProtocolRawStream(ROLLBACK, { onRawData: discard });
  };

  const step = async (connection: Connection): Promise<boolean> => {
    let unit: Unit | null;
    try {
      unit = takeUnit(connection);
    } catch {
      connection.socket.destroy();
      connection.closed = true;
      return true;
    }
    if (!unit) return false;
    if (unit.kind === 'reply') connection.socket.write(unit.bytes);
    else if (unit.kind === 'end') {
      connection.socket.end();
      connection.closed = true;
    } else {
      owner = connection;
      connection.midExchange = !unit.complete;
      // Every call names where its answer goes: PGlite keeps the last stream's callback otherwise.
      await db.execProtocolRawStream(unit.bytes, { onRawData: (data) => write(connection, data) });
      if (unit.startup) connection.started = true;
      if (unit.complete && !db.isInTransaction()) owner = null;
    }
    return true;
  };

  const pump = async () => {
    for (;;) {
      const connection = owner ?? ready.shift();
      if (!connection) return;
      if (connection.closed) {
        if (connection === owner) {
          await reset(connection);
          owner = null;
        }
        continue;
      }
      const progressed = await step(connection);
      if (!progressed && connection === owner) return; // the rest of its exchange has not arrived yet
      if (progressed && connection !== owner && connection.buffer.length > 0 && !ready.includes(connection)) ready.push(connection);
    }
  };
  const kick = () => {
    if (running || failed) return;
    running = pump()
      .catch((error: unknown) => {
        failed = true;
        for (const connection of connections) connection.socket.destroy();
        onFatal(error);
      })
      .finally(() => {
        running = null;
      });
  };

  const server = net.createServer((socket) => {
    const connection: Connection = { socket, buffer: Buffer.alloc(0), started: false, closed: false, midExchange: false };
    connections.add(connection);
    socket.on('data', (data) => {
      connection.buffer = connection.buffer.length ? Buffer.concat([connection.buffer, data]) : data;
      if (connection !== owner && !ready.includes(connection)) ready.push(connection);
      kick();
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      connection.closed = true;
      connections.delete(connection);
      const waiting = ready.indexOf(connection);
      if (waiting >= 0) ready.splice(waiting, 1);
      if (connection === owner) kick();
    });
  });
  server.maxConnections = options.maxConnections ?? 32;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // The directory (0700) already keeps other users out; the socket itself is the owner's alone as well.
  chmodSync(socketPath, 0o600);

  return {
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const connection of connections) {
        connection.closed = true;
        connection.socket.destroy();
      }
      await closed;
      while (running) await running;
    },
  };
}
