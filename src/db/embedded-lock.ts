import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors';

/** What a process that owns the embedded database writes beside it, so others can find its socket. */
export type EmbeddedLock = { pid: number; socketPort: number | null };

const lockPath = (dataDir: string) => path.join(dataDir, 'pglite.lock');

// Directories this process holds: the lock file alone cannot stop this process opening one twice.
const heldHere = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live owner of the embedded database under dataDir, if any; a stale lock is removed. */
export function readLiveLock(dataDir: string): EmbeddedLock | null {
  let lock: EmbeddedLock;
  try {
    lock = JSON.parse(readFileSync(lockPath(dataDir), 'utf8')) as EmbeddedLock;
  } catch {
    return null;
  }
  if (lock.pid !== process.pid && isAlive(lock.pid)) return lock;
  if (lock.pid !== process.pid) rmSync(lockPath(dataDir), { force: true });
  return lock.pid === process.pid ? lock : null;
}

/**
 * Takes the lock for this process. PGlite is single-process: a second process opening the same
 * directory would corrupt it, so this refuses while another live process holds the lock.
 */
export function acquireLock(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true });
  const owner = readLiveLock(dataDir);
  if (heldHere.has(path.resolve(dataDir)) || (owner && owner.pid !== process.pid)) {
    throw new AppError({
      code: 'CONFLICT',
      userMessage: `The embedded database in ${dataDir} is in use by process ${owner?.pid ?? process.pid}. Stop it, or run admin commands while it runs (they connect through it).`,
    });
  }
  try {
    writeFileSync(lockPath(dataDir), JSON.stringify({ pid: process.pid, socketPort: null } satisfies EmbeddedLock), { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    writeFileSync(lockPath(dataDir), JSON.stringify({ pid: process.pid, socketPort: null } satisfies EmbeddedLock));
  }
  heldHere.add(path.resolve(dataDir));
}

export function publishSocketPort(dataDir: string, socketPort: number): void {
  writeFileSync(lockPath(dataDir), JSON.stringify({ pid: process.pid, socketPort } satisfies EmbeddedLock));
}

export function releaseLock(dataDir: string): void {
  heldHere.delete(path.resolve(dataDir));
  const owner = readLiveLock(dataDir);
  if (owner?.pid === process.pid) rmSync(lockPath(dataDir), { force: true });
}
