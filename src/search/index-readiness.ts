import type { CodeIndex, PrismaClient, Project } from '../db/prisma';
import { AppError, withoutServerPaths } from '../errors';
import { requestIndexRun } from '../indexing/code-index.service';
import { resolveCommit, validateRef } from '../indexing/git-reader';
import { gitDirWithoutFetch } from '../indexing/repository-location';
import type { Queues } from '../queues';
import { readCodebase, type CodebaseRead } from './read-codebase';
import type { SearchScope } from './search-scope';

/** A ref's index as search needs it: searchable, or why not (with words for the user). */
export type IndexReadiness =
  | {
      status: 'ready';
      index: CodeIndex;
      scope: SearchScope & { embedderVersion: string; exclusions: readonly string[] };
      commitSha: string;
    }
  | { status: 'not_ready'; index: CodeIndex | null; reason: 'started' | 'pending' | 'indexing' | 'failed'; message: string };

/** A ref's index that search can read. */
export type ReadyIndex = Extract<IndexReadiness, { status: 'ready' }>;

export type ReadinessOptions = {
  prisma: PrismaClient;
  queues: Pick<Queues, 'enqueueIndex'>;
  project: Project;
  /** Default: the project's default branch. */
  ref?: string | null;
  /** Already normalised (normalizeDirectory): '' for the whole repository. */
  directory?: string;
  /** Start indexing when the ref has no index (lazy indexing, as GitLab's ad-hoc indexing). Default true. */
  startIndexing?: boolean;
  /** What the caller read with the project (readCodebase): its index and snapshot are used when they are this project's and ref's. */
  read?: CodebaseRead | null;
  /**
   * DATA_DIR, where remote repositories' mirrors are: before an index run is started for a ref
   * other than the default branch, the ref must be in the repository (when it can be looked up
   * without a fetch), so that a made-up ref starts no run and leaves no failed index behind.
   */
  dataDir?: string;
};

/**
 * A ref's index and its active snapshot, read side by side (one round trip's wait instead of two,
 * as an include would make); a run that switches the snapshot between the two reads is caught by
 * the id check, and the snapshot the index names is read then.
 */
async function readIndex(prisma: PrismaClient, projectId: number, ref: string): Promise<Pick<CodebaseRead, 'index' | 'snapshot'>> {
  const [index, active] = await Promise.all([
    prisma.codeIndex.findUnique({ where: { projectId_ref: { projectId, ref } } }),
    prisma.codeIndexSnapshot.findFirst({ where: { activeOf: { some: { projectId, ref } } } }),
  ]);
  const activeId = index?.activeSnapshotId ?? null;
  const snapshot =
    activeId === null ? null : active?.id === activeId ? active : await prisma.codeIndexSnapshot.findUnique({ where: { id: activeId } });
  return { index, snapshot };
}

/** Finds the snapshot search should read, starting an index run for a ref that has none. */
/** What a search over a project's snapshot looks at (the one place a scope is made from the rows). */
export function snapshotScope(
  project: Pick<Project, 'id' | 'vectorGraph' | 'contextExclusions'>,
  snapshot: { id: bigint; coversProject: boolean; embedderVersion: string },
  directory = '',
) {
  return {
    projectId: project.id,
    snapshotId: snapshot.id,
    directory,
    coversProject: snapshot.coversProject,
    vectorGraph: project.vectorGraph,
    embedderVersion: snapshot.embedderVersion,
    exclusions: project.contextExclusions,
  };
}

/** The scope of a ref's active snapshot, for commands that index and then search; null when the ref has none. */
export async function activeSnapshotScope(prisma: PrismaClient, options: { projectId: number; ref: string }) {
  const codeIndex = await prisma.codeIndex.findUnique({
    where: { projectId_ref: { projectId: options.projectId, ref: options.ref } },
    include: { activeSnapshot: true, project: true },
  });
  return codeIndex?.activeSnapshot ? snapshotScope(codeIndex.project, codeIndex.activeSnapshot) : null;
}

export async function indexReadiness(options: ReadinessOptions): Promise<IndexReadiness> {
  const { prisma, project } = options;
  const ref = validateRef(options.ref?.trim() || project.defaultBranch);
  const directory = options.directory ?? '';
  const known = options.read?.project.id === project.id && options.read.ref === ref ? options.read : null;
  const { index, snapshot } = known ?? (await readIndex(prisma, project.id, ref));
  if (index && snapshot) {
    return {
      status: 'ready',
      index,
      commitSha: snapshot.commitSha,
      scope: snapshotScope(project, snapshot, directory),
    };
  }
  const name = `${project.fullPath} (${ref})`;
  if (index?.state === 'failed') {
    return {
      status: 'not_ready',
      index,
      reason: 'failed',
      message:
        `The code index of ${name} failed: ` +
        `${index.lastError ? withoutServerPaths(index.lastError).replace(/\.$/, '') : 'unknown error'}. A maintainer can fix the cause ` +
        `and rebuild it.`,
    };
  }
  if (index && (index.state === 'indexing' || index.state === 'pending')) {
    return {
      status: 'not_ready',
      index,
      reason: index.state,
      message: `The code of ${name} is still being indexed (${index.filesIndexed} files so far). Ask again in a moment.`,
    };
  }
  if (options.startIndexing === false)
    return { status: 'not_ready', index: index ?? null, reason: 'pending', message: `${name} is not indexed.` };
  if (ref !== project.defaultBranch && options.dataDir) {
    const gitDir = gitDirWithoutFetch({ projectId: project.id, repositoryUrl: project.repositoryUrl, dataDir: options.dataDir });
    if (gitDir && (await resolveCommit({ repository: gitDir }, ref)) === null)
      throw new AppError({
        code: 'NOT_FOUND',
        userMessage: `${project.fullPath} has no branch, tag or commit named "${ref}"`,
        field: 'ref',
      });
  }
  const { index: pending } = await requestIndexRun({ prisma, queues: options.queues }, { projectId: project.id, ref, reason: 'chat' });
  return {
    status: 'not_ready',
    index: pending,
    reason: 'started',
    message: `The code of ${name} was not indexed yet: indexing has started. Ask again shortly.`,
  };
}

/** Times readLiveSnapshot reads again on the snapshot that replaced the one it read. */
const LIVE_SNAPSHOT_ATTEMPTS = 4;

/**
 * Runs `read` (one or more statements over a ready index's snapshot) so that all of it saw the
 * snapshot whole. An index run that activates a new snapshot deletes the ref's older ones, and
 * garbage collection then their chunks: a statement that starts after that finds none of the
 * files, and a search would answer "nothing matched". Each statement sees the database as it was
 * when it started, and a deleted snapshot never comes back, so when the snapshot still exists
 * (with the project's vectors where the scope says) once `read` is over, every statement of it saw
 * the snapshot complete. Otherwise the ref's index is read again and `read` runs on the snapshot
 * now active, at most LIVE_SNAPSHOT_ATTEMPTS times (an index run takes longer than a search; after
 * that the last result is given). One primary-key look-up per read, where keeping every replaced
 * snapshot for a while would keep its chunks, and garbage, in every search's way.
 */
export async function readLiveSnapshot<T>(
  options: Pick<ReadinessOptions, 'prisma' | 'queues' | 'project' | 'directory'> & { ready: ReadyIndex },
  read: (ready: ReadyIndex) => Promise<T>,
): Promise<{ result: T; ready: ReadyIndex }> {
  let ready = options.ready;
  for (let attempt = 1; ; attempt += 1) {
    const result = await read(ready);
    const { scope } = ready;
    const live = await options.prisma.codeIndexSnapshot.count({
      where: { id: scope.snapshotId, index: { project: { vectorGraph: scope.vectorGraph } } },
    });
    if (live > 0 || attempt >= LIVE_SNAPSHOT_ATTEMPTS) return { result, ready };
    const again = await readCodebase(options.prisma, { where: { id: options.project.id }, ref: ready.index.ref });
    if (!again) return { result, ready };
    const next = await indexReadiness({
      prisma: options.prisma,
      queues: options.queues,
      project: again.project,
      ref: ready.index.ref,
      directory: options.directory,
      read: again,
      startIndexing: false,
    });
    // The ref's index was dropped (its branch deleted): what was read is all there is.
    if (next.status !== 'ready') return { result, ready };
    ready = next;
  }
}
