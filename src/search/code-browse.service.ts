import type { Viewer } from '../auth/viewer';
import type { PrismaClient } from '../db/prisma';
import type { DuoAccess } from '../auth/duo-access';
import type { Queues } from '../queues';
import { AppError, badInput } from '../errors';
import { isExcludedBy } from '../auth/context-exclusions';
import { indexReadiness, readLiveSnapshot } from './index-readiness';
import { authorizeCodebaseRead } from './read-codebase';
import { readSnapshotFile, snapshotDirectories, type SnapshotFile } from './snapshot-files';

export type BrowseOptions = {
  prisma: PrismaClient;
  /** Not used to start indexing: browsing never does. */
  queues: Pick<Queues, 'enqueueIndex'>;
  viewer: Viewer;
  access: DuoAccess | Promise<DuoAccess>;
  /** A full path, or a numeric id as a string. */
  project: string;
  /** Default: the project's default branch. */
  ref?: string | null;
};

const FILE_NOT_FOUND = '404 File Not Found';

/** A file path as GitLab's files API takes it: inside the repository, forward slashes, no `..`. */
export function normalizeFilePath(input: string, field = 'file_path'): string {
  const parts = input.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.length === 0) throw badInput(`${field} is missing`, field);
  if (input.length > 4096) throw badInput(`${field} is too long (maximum is 4096 characters)`, field);
  if (/[\\\0-\x1f]/.test(input) || parts.includes('..')) throw badInput(`${field} must be a path inside the repository`, field);
  return parts.join('/');
}

/** The project under search's read rule and the ref's index as it stands: browsing never starts indexing. */
async function browseSnapshot(options: BrowseOptions, check: { category: 'repository' | 'directory'; field: string }) {
  const read = await authorizeCodebaseRead({ ...options, ...check });
  const readiness = await indexReadiness({
    prisma: options.prisma,
    queues: options.queues,
    project: read.project,
    ref: options.ref,
    startIndexing: false,
    read,
  });
  return { project: read.project, readiness };
}

/** `read` over the ref's ready snapshot, or null while it has none (readLiveSnapshot: a push replacing it meanwhile is read again). */
async function readBrowsed<T>(
  options: BrowseOptions,
  browsed: Awaited<ReturnType<typeof browseSnapshot>>,
  read: (snapshotId: bigint) => Promise<T>,
): Promise<{ result: T; commitSha: string; ref: string } | null> {
  const { project, readiness } = browsed;
  if (readiness.status !== 'ready') return null;
  const { result, ready } = await readLiveSnapshot({ prisma: options.prisma, queues: options.queues, project, ready: readiness }, (live) =>
    read(live.scope.snapshotId),
  );
  return { result, commitSha: ready.commitSha, ref: ready.index.ref };
}

/**
 * A file of the indexed snapshot of a ref, under the same rule as search (read access, Duo on,
 * the repository context feature). Missing, hidden, excluded and not-yet-indexed files all get
 * the same 404.
 */
export async function readIndexedFile(
  options: BrowseOptions & { path: string },
): Promise<SnapshotFile & { commitSha: string; ref: string }> {
  const path = normalizeFilePath(options.path);
  const browsed = await browseSnapshot(options, { category: 'repository', field: 'id' });
  const { project } = browsed;
  // Excluded files stay out of view as they stay out of search (gitignore patterns, as search-code reads them).
  const excluded = isExcludedBy(project.contextExclusions)(path);
  const read = excluded
    ? null
    : await readBrowsed(options, browsed, (snapshotId) => readSnapshotFile(options.prisma, { projectId: project.id, snapshotId, path }));
  if (!read?.result) throw new AppError({ code: 'NOT_FOUND', userMessage: FILE_NOT_FOUND, field: 'file_path' });
  return { ...read.result, commitSha: read.commitSha, ref: read.ref };
}

/** The directories of a ref's indexed snapshot for a directory picker; empty while nothing is indexed. */
export async function listIndexedDirectories(options: BrowseOptions & { search?: string | null; limit: number }): Promise<string[]> {
  const browsed = await browseSnapshot(options, { category: 'directory', field: 'directories' });
  const { project } = browsed;
  // Excluded directories stay out of the picker as their files stay out of search (a snapshot built before the rule holds them).
  const excluded = isExcludedBy(project.contextExclusions);
  const read = await readBrowsed(options, browsed, (snapshotId) =>
    snapshotDirectories(options.prisma, {
      projectId: project.id,
      snapshotId,
      search: options.search,
      limit: options.limit,
      keep: (directory) => !excluded(`${directory}/`),
    }),
  );
  return read?.result ?? [];
}
