import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { AppError, badInput } from '../errors';

/**
 * Reads a git repository with the `git` command, never through a shell, with refs and paths
 * validated first: what the indexing workers need (resolve a ref, list a tree, the files changed
 * between two commits, and many blobs streamed through one `git cat-file --batch`).
 */

const SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

/** Git's own rules for ref names (git check-ref-format), plus no leading '-' so it is never an option. */
export function validateRef(ref: string): string {
  const bad =
    !ref ||
    ref.length > 1024 ||
    ref.startsWith('-') ||
    ref.startsWith('/') ||
    ref.endsWith('/') ||
    ref.endsWith('.') ||
    ref.endsWith('.lock') ||
    ref.includes('..') ||
    ref.includes('//') ||
    ref.includes('@{') ||
    ref === '@' ||
    /[\x00-\x20\x7f~^:?*[\\]/.test(ref) ||
    ref.split('/').some((part) => part.startsWith('.'));
  if (bad) throw badInput(`"${ref.slice(0, 100)}" is not a valid git ref`, 'ref');
  return ref;
}

export type GitOptions = { repository: string; timeoutMs?: number };

function git(options: GitOptions, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      ['-C', options.repository, ...args],
      { maxBuffer: 256 * 1024 * 1024, timeout: options.timeoutMs ?? 60_000, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error) {
          reject(
            new AppError({
              code: 'INTERNAL',
              userMessage: `git ${args[0]} failed while reading the project's repository; the worker log has the details`,
              internalMessage: `git ${args[0]} failed in ${options.repository}: ${String(stderr || error.message)
                .trim()
                .slice(0, 300)}`,
              cause: error,
            }),
          );
          return;
        }
        resolve(stdout);
      },
    );
    if (input !== undefined) {
      child.stdin?.on('error', () => undefined); // a git that failed early is reported by the callback
      child.stdin?.end(input);
    }
  });
}

/** The commit a ref (branch, tag or sha) points at, or null when there is none (or the repository cannot be read). */
export async function resolveCommit(options: GitOptions, ref: string): Promise<string | null> {
  const name = SHA.test(ref) ? ref : validateRef(ref);
  const reader = new BlobReader(options);
  try {
    return await reader.resolveCommit(name);
  } catch {
    return null;
  } finally {
    reader.close();
  }
}

/** The commit a branch (or any other ref, or a sha) points at: refs/heads/<ref> first, so a tag of the same name never wins. */
export async function resolveBranchFirst(reader: Pick<BlobReader, 'resolveCommit'>, ref: string): Promise<string | null> {
  validateRef(ref);
  return (await reader.resolveCommit(`refs/heads/${ref}`)) ?? (await reader.resolveCommit(ref));
}

export type TreePath = { path: string; blob: string; mode: string };
export type TreeEntry = TreePath & { size: number };

/** Every file of a commit's tree (blobs only: no submodules or symlinks), with its size. */
export async function listFiles(options: GitOptions, commit: string): Promise<TreeEntry[]> {
  if (!SHA.test(commit)) throw badInput('commit must be a full sha', 'commit');
  const output = await git(options, ['ls-tree', '-r', '-z', '--long', '--full-tree', commit]);
  // `<mode> <type> <object> <padded size>\t<path>` per file, read by position: a large monorepo's
  // tree has 100,000 of them, parsed on the event loop (about twice as fast as splitting each).
  const entries: TreeEntry[] = [];
  for (const record of output.split('\0')) {
    if (!record) continue;
    const tab = record.indexOf('\t');
    const afterMode = record.indexOf(' ');
    const mode = record.slice(0, afterMode);
    if (!isRegularFile(mode)) continue;
    const objectStart = afterMode + 6; // after `blob `
    const objectEnd = record.indexOf(' ', objectStart);
    entries.push({
      path: record.slice(tab + 1),
      blob: record.slice(objectStart, objectEnd),
      mode,
      size: Number(record.slice(objectEnd, tab)),
    });
  }
  return entries;
}

/**
 * The entries with their blobs' sizes, read by one `git cat-file --batch-check` (each blob once):
 * an incremental run sizes only the files it reads. `ls-tree --long` reads the header of every
 * blob, which on a repository of loose objects (a fresh local commit) is one zlib file each: 110 ms
 * for rxjs's 2,266 files against 10 ms packed.
 */
export async function withSizes(options: GitOptions, entries: readonly TreePath[]): Promise<TreeEntry[]> {
  if (entries.length === 0) return [];
  const blobs = [...new Set(entries.map((entry) => entry.blob))];
  checkBlobIds(blobs);
  const sizes = new Map<string, number>();
  for (const line of (await git(options, ['cat-file', '--batch-check'], `${blobs.join('\n')}\n`)).split('\n')) {
    const [blob, type, size] = line.split(' ');
    if (type === 'blob') sizes.set(blob, Number(size));
  }
  return entries.map((entry) => {
    const size = sizes.get(entry.blob);
    if (size === undefined)
      throw new AppError({
        code: 'INTERNAL',
        userMessage: "a file's blob is missing from the project's repository",
        internalMessage: `git cat-file --batch-check found no blob ${entry.blob} (${entry.path}) in ${options.repository}`,
      });
    return { ...entry, size };
  });
}

export type FileChange = { status: 'added' | 'modified' | 'deleted'; path: string };

/** A changed path, with the new commit's file there when it is a regular one (as listFiles lists it, without its size). */
export type ChangedEntry = FileChange & { entry: TreePath | null };

/**
 * The files that differ between two commits (renames as a delete and an add), each with its new
 * blob and mode when it is a regular file, from one `git diff --raw`: an incremental run needs no
 * listing of the new commit's tree besides.
 */
export async function changedEntries(options: GitOptions, from: string, to: string): Promise<ChangedEntry[]> {
  if (!SHA.test(from) || !SHA.test(to)) throw badInput('commits must be full shas', 'commit');
  const output = await git(options, ['diff', '--raw', '-z', '--no-abbrev', '--no-renames', '--no-ext-diff', from, to]);
  // `:<old mode> <new mode> <old object> <new object> <status>`, then the path, each ended by NUL.
  const fields = output.split('\0');
  const changes: ChangedEntry[] = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const [, mode, , blob, code] = fields[index].split(' ');
    const path = fields[index + 1];
    const status = code.startsWith('A') ? 'added' : code.startsWith('D') ? 'deleted' : 'modified';
    changes.push({ status, path, entry: isRegularFile(mode) ? { path, blob, mode } : null });
  }
  return changes;
}

/** A tree entry's mode for a regular file (the files listed and indexed): not a tree, submodule or symlink, nor none (deleted). */
const isRegularFile = (mode: string) => !['000000', '040000', '40000', '160000', '120000'].includes(mode);

/** Whether `ancestor` is reachable from `descendant`: false after a force-push rewrote history. */
export async function isAncestor(options: GitOptions, ancestor: string, descendant: string): Promise<boolean> {
  if (!SHA.test(ancestor) || !SHA.test(descendant)) throw badInput('commits must be full shas', 'commit');
  try {
    await git(options, ['merge-base', '--is-ancestor', ancestor, descendant]);
    return true;
  } catch {
    return false;
  }
}

/**
 * The contents of many blobs through one `git cat-file --batch` process (a BlobReader for this one
 * read), in the order asked. A missing object yields null content rather than failing the whole batch.
 */
export async function* readBlobs(options: GitOptions, blobs: readonly string[]): AsyncGenerator<{ blob: string; content: Buffer | null }> {
  checkBlobIds(blobs);
  if (blobs.length === 0) return;
  const reader = new BlobReader(options);
  try {
    yield* await reader.read(blobs);
  } finally {
    reader.close();
  }
}

function checkBlobIds(blobs: readonly string[]): void {
  for (const blob of blobs) if (!SHA.test(blob)) throw badInput('blob ids must be full shas', 'blob');
}

/** An object `git cat-file --batch` gave: its id, type and content; null when it has no such object. */
type GitObject = { oid: string; type: string; content: Buffer } | null;

/**
 * One `git cat-file --batch` process for many reads (an index run's batches): starting a process
 * from a large Node process costs 20–30 ms of the event loop (the fork copies its page tables, the
 * child's exec tears them down), so a run starts one, not one per batch, and asks it for the
 * run's ref and ancestry too (resolveCommit, reachable). Reads are answered in the order asked;
 * close() ends the process.
 */
export class BlobReader {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  /** Objects asked for and not yet read, in order. */
  private readonly pending: Array<{ resolve: (object: GitObject) => void; reject: (error: Error) => void }> = [];
  private failure: Error | null = null;

  constructor(private readonly options: GitOptions) {
    this.child = spawn('git', ['-C', options.repository, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    this.child.stdin.on('error', () => undefined);
    this.child.on('error', (error) => this.fail(error));
    this.child.on('close', () => this.fail(null));
  }

  /** The blobs' contents, in the order asked; a missing object gives null. */
  async read(blobs: readonly string[]): Promise<Array<{ blob: string; content: Buffer | null }>> {
    checkBlobIds(blobs);
    const objects = await this.objects(blobs);
    return blobs.map((blob, index) => ({ blob, content: objects[index]?.content ?? null }));
  }

  /** The commit a ref (branch, tag or sha) points at, or null when there is none: as `git rev-parse` answers. */
  async resolveCommit(ref: string): Promise<string | null> {
    const name = SHA.test(ref) ? ref : validateRef(ref);
    const [object] = await this.objects([`${name}^{commit}`]);
    return object?.type === 'commit' ? object.oid : null;
  }

  /**
   * Whether `ancestor` is reachable from `descendant`, as isAncestor answers, walking the parents of
   * at most `limit` commits back from `descendant` (a push's new commits are a few): null when the
   * walk ends undecided, at the limit or at a commit the repository lacks (a shallow clone's edge).
   */
  async reachable(ancestor: string, descendant: string, limit = 256): Promise<boolean | null> {
    if (!SHA.test(ancestor) || !SHA.test(descendant)) throw badInput('commits must be full shas', 'commit');
    const seen = new Set([descendant]);
    for (let level = [descendant]; level.length;) {
      if (seen.has(ancestor)) return true;
      if (seen.size > limit) return null;
      const commits = await this.objects(level);
      level = [];
      for (const commit of commits) {
        if (commit?.type !== 'commit') return null;
        for (const parent of parentsOf(commit.content)) {
          if (seen.has(parent)) continue;
          seen.add(parent);
          level.push(parent);
        }
      }
    }
    return seen.has(ancestor);
  }

  /** The regular file `name` at the top of a commit's tree, as listFiles lists it (without its size), or null. */
  async rootFile(commit: string, name: string): Promise<TreePath | null> {
    if (!SHA.test(commit)) throw badInput('commit must be a full sha', 'commit');
    const [tree] = await this.objects([`${commit}^{tree}`]);
    if (tree?.type !== 'tree') return null;
    const entry = treeEntries(tree.content, commit.length / 2).find((candidate) => candidate.name === name);
    return entry && isRegularFile(entry.mode) ? { path: name, blob: entry.oid, mode: entry.mode } : null;
  }

  close(): void {
    this.failure ??= new Error('the blob reader is closed');
    this.child.stdin.end();
    if (this.child.exitCode === null) this.child.kill();
  }

  /** The objects `names` (ids or revisions, one line each) stand for, in order. */
  private async objects(names: readonly string[]): Promise<GitObject[]> {
    if (names.length === 0) return [];
    if (this.failure) throw this.failure;
    const objects = names.map(() => new Promise<GitObject>((resolve, reject) => this.pending.push({ resolve, reject })));
    this.child.stdin.write(`${names.join('\n')}\n`);
    return Promise.all(objects);
  }

  private receive(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    let buffer = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
    let offset = 0;
    while (this.pending.length) {
      const newline = buffer.indexOf(10, offset);
      if (newline === -1) break;
      const header = buffer.subarray(offset, newline).toString('utf8');
      // `<name> missing`, or `<name> ambiguous` for a name that could be several objects.
      if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
        offset = newline + 1;
        this.pending.shift()!.resolve(null);
        continue;
      }
      const [oid, type, sizeText] = header.split(' ');
      const size = Number(sizeText);
      if (buffer.length < newline + 1 + size + 1) break;
      const content = Buffer.from(buffer.subarray(newline + 1, newline + 1 + size));
      offset = newline + 1 + size + 1;
      this.pending.shift()!.resolve({ oid, type, content });
    }
    buffer = buffer.subarray(offset);
    this.chunks.length = 0;
    this.buffered = buffer.length;
    if (buffer.length) this.chunks.push(buffer);
  }

  private fail(error: Error | null): void {
    const failure =
      error ??
      new AppError({
        code: 'INTERNAL',
        userMessage: "git cat-file stopped before answering every object asked of the project's repository",
        internalMessage: `git cat-file stopped with ${this.pending.length} objects unanswered in ${this.options.repository}`,
      });
    this.failure ??= failure;
    for (const waiting of this.pending.splice(0)) waiting.reject(failure);
  }
}

/** The parents a commit object names: its `parent` lines, which follow its `tree` line. */
function parentsOf(commit: Buffer): string[] {
  const parents: string[] = [];
  const text = commit.toString('utf8', 0, Math.min(commit.length, 64 * 1024));
  for (let start = text.indexOf('\n') + 1; text.startsWith('parent ', start);) {
    const end = text.indexOf('\n', start);
    parents.push(text.slice(start + 'parent '.length, end === -1 ? undefined : end));
    if (end === -1) break;
    start = end + 1;
  }
  return parents;
}

/** A tree object's entries: `<mode> <name>` NUL, then the object's id in `idBytes` raw bytes, each. */
function treeEntries(tree: Buffer, idBytes: number): Array<{ mode: string; name: string; oid: string }> {
  const entries: Array<{ mode: string; name: string; oid: string }> = [];
  for (let offset = 0; offset < tree.length;) {
    const space = tree.indexOf(0x20, offset);
    const nul = tree.indexOf(0, space);
    if (space === -1 || nul === -1 || nul + 1 + idBytes > tree.length) break;
    entries.push({
      mode: tree.toString('latin1', offset, space),
      name: tree.toString('utf8', space + 1, nul),
      oid: tree.toString('hex', nul + 1, nul + 1 + idBytes),
    });
    offset = nul + 1 + idBytes;
  }
  return entries;
}
