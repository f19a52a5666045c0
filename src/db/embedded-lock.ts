import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors';

/**
 * What a process that owns the embedded database writes beside it, so that admin commands can
 * find its socket: a Unix socket in a directory only the owner's user may enter (no TCP port
 * anyone on the machine could connect to).
 */
export type EmbeddedLock = { pid: number; socketPath: string | null };

const lockPath = (dataDir: string) => path.join(dataDir, 'pglite.lock');
const takeoverPath = (dataDir: string) => path.join(dataDir, 'pglite.lock.takeover');
// A process that died while replacing a stale lock leaves its takeover file; after this long it is stale too.
const TAKEOVER_STALE_MS = 30_000;

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

/**
 * The lock as written; 'unreadable' when the file exists but cannot be parsed. Files appear whole (see writeWhole), so that means damage,
 * not a writer mid-way.
 */
function readLock(dataDir: string): EmbeddedLock | 'unreadable' | null {
  let text: string;
  try {
    text = readFileSync(lockPath(dataDir), 'utf8');
  } catch {
    return null;
  }
  try {
    const lock = JSON.parse(text) as EmbeddedLock;
    return typeof lock.pid === 'number' ? lock : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/** The live owner of the embedded database under dataDir, if any (this process included). */
export function readLiveLock(dataDir: string): EmbeddedLock | null {
  const lock = readLock(dataDir);
  if (lock === null || lock === 'unreadable') return null;
  return lock.pid === process.pid || isAlive(lock.pid) ? lock : null;
}

// A file with its whole content, under a name of this process alone; linked or renamed into place.
function writeWhole(dataDir: string, lock: EmbeddedLock): string {
  const temporary = path.join(dataDir, `pglite.lock.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(temporary, JSON.stringify(lock), { mode: 0o600 });
  return temporary;
}

const inUse = (dataDir: string, pid: number | string) =>
  new AppError({
    code: 'CONFLICT',
    userMessage:
      `The embedded database in ${dataDir} is in use by process ${pid}. Stop it, or run admin commands while it runs (they ` +
      `connect through it).`,
  });

/**
 * Takes the lock for this process, atomically: PGlite is single-process, and a second process
 * opening the same directory would corrupt it. The lock file is created with link(2), which fails
 * if the file exists, and appears with its whole content; of processes started at once exactly
 * one wins. A lock left by a dead process is replaced under a second exclusive file, so that two
 * processes cleaning it up at once cannot both win.
 */
export function acquireLock(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true });
  if (heldHere.has(path.resolve(dataDir))) throw inUse(dataDir, process.pid);
  const temporary = writeWhole(dataDir, { pid: process.pid, socketPath: null });
  try {
    if (tryLink(temporary, lockPath(dataDir))) return void heldHere.add(path.resolve(dataDir));
    const owner = readLock(dataDir);
    if (owner === 'unreadable') throw inUse(dataDir, 'unknown (pglite.lock cannot be read: remove it if no service runs)');
    if (owner && isAlive(owner.pid)) throw inUse(dataDir, owner.pid);
    replaceStaleLock(dataDir, owner, temporary);
    heldHere.add(path.resolve(dataDir));
  } finally {
    rmSync(temporary, { force: true });
  }
}

function tryLink(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

function replaceStaleLock(dataDir: string, stale: EmbeddedLock | null, temporary: string): void {
  const takeover = takeoverPath(dataDir);
  try {
    if (Date.now() - statSync(takeover).mtimeMs > TAKEOVER_STALE_MS) rmSync(takeover, { force: true });
  } catch {
    // No takeover file: the usual case.
  }
  if (!tryLink(temporary, takeover)) throw inUse(dataDir, 'another process starting up');
  try {
    // Still the same stale lock (nobody replaced it between our read and our takeover)?
    const current = readLock(dataDir);
    if (current !== null && (current === 'unreadable' || current.pid !== stale?.pid))
      throw inUse(dataDir, current === 'unreadable' ? 'unknown' : current.pid);
    rmSync(lockPath(dataDir), { force: true });
    if (!tryLink(temporary, lockPath(dataDir))) throw inUse(dataDir, 'another process starting up');
  } finally {
    unlinkSync(takeover);
  }
}

/** Records where the owner's socket is; the file is replaced whole (rename), never seen half-written. */
export function publishSocketPath(dataDir: string, socketPath: string): void {
  const temporary = writeWhole(dataDir, { pid: process.pid, socketPath });
  renameSync(temporary, lockPath(dataDir));
}

export function releaseLock(dataDir: string): void {
  heldHere.delete(path.resolve(dataDir));
  const owner = readLock(dataDir);
  if (owner !== null && owner !== 'unreadable' && owner.pid === process.pid) rmSync(lockPath(dataDir), { force: true });
}
