import { ACCESS_LEVELS, findReadableProject, projectAccessLevel } from '../auth/policies';
import type { Viewer } from '../auth/viewer';
import type { CodeIndex, PrismaClient } from '../db/prisma';
import { forbidden, notFound } from '../errors';
import type { IndexJob, Queues } from '../queues';
import { validateRef } from './git-reader';

/** A (project, ref) index as the API shows it. */
export type CodeIndexStatus = Pick<
  CodeIndex,
  'state' | 'commitSha' | 'filesIndexed' | 'chunkCount' | 'embeddedCount' | 'lastError' | 'startedAt' | 'finishedAt'
> & { ref: string };

export async function findCodeIndex(prisma: PrismaClient, options: { projectId: number; ref: string }): Promise<CodeIndex | null> {
  return prisma.codeIndex.findUnique({ where: { projectId_ref: { projectId: options.projectId, ref: options.ref } } });
}

/** Marks an index as waiting for a run (creating it), without touching what search serves. */
export async function markPending(prisma: PrismaClient, options: { projectId: number; ref: string }): Promise<CodeIndex> {
  const where = { projectId_ref: { projectId: options.projectId, ref: options.ref } };
  const index = await prisma.codeIndex.upsert({
    where,
    create: { projectId: options.projectId, ref: options.ref, state: 'pending' },
    update: {},
  });
  // A run in progress stays `indexing`; search keeps serving the active snapshot whatever the state says.
  if (index.state === 'indexing' || index.state === 'pending') return index;
  return prisma.codeIndex.update({ where, data: { state: 'pending' } });
}

export type IndexRunDependencies = { prisma: PrismaClient; queues: Pick<Queues, 'enqueueIndex'> };

/**
 * Requests an index run for a project's ref: the index is marked pending (search keeps serving its
 * active snapshot) and the job queued. The one way every caller (push, API, chat) starts a run.
 */
export async function requestIndexRun(
  dependencies: IndexRunDependencies,
  job: IndexJob,
  options: { debounceMs?: number } = {},
): Promise<{ index: CodeIndex | null; jobId: string }> {
  // A deleted branch's run drops the index instead: nothing to mark.
  const index = job.deleted ? null : await markPending(dependencies.prisma, { projectId: job.projectId, ref: job.ref });
  const jobId = await dependencies.queues.enqueueIndex(job, options);
  return { index, jobId };
}

/**
 * Marks a run that no worker will finish as failed: one whose job BullMQ failed without running it,
 * because it stalled more often than allowed (the workers running it died mid-run, out of memory
 * say). Only a run that started before the job failed: a run of a later job is its own. Search keeps
 * serving the active snapshot either way. True when a run was marked.
 */
export async function failAbandonedRun(
  prisma: PrismaClient,
  options: { projectId: number; ref: string; failedAt: Date },
): Promise<boolean> {
  const { count } = await prisma.codeIndex.updateMany({
    where: { projectId: options.projectId, ref: options.ref, state: 'indexing', startedAt: { lt: options.failedAt } },
    data: { state: 'failed', lastError: ABANDONED_RUN_ERROR, finishedAt: new Date() },
  });
  return count > 0;
}

/** What an index whose run no worker finished says, in its lastError. */
export const ABANDONED_RUN_ERROR =
  'Indexing stopped: the workers running it stopped more often than allowed (out of memory, killed). ' +
  'Push again or rebuild the index to retry.';

/** Drops a ref's index and its manifests; chunks no other ref uses go at the next garbage collection. */
export async function dropCodeIndex(prisma: PrismaClient, options: { projectId: number; ref: string }): Promise<boolean> {
  const { count } = await prisma.codeIndex.deleteMany({ where: { projectId: options.projectId, ref: options.ref } });
  return count > 0;
}

export type RequestCodeIndexOptions = {
  prisma: PrismaClient;
  queues: Pick<Queues, 'enqueueIndex'>;
  viewer: Viewer;
  projectPath: string;
  /** Default: the project's default branch. */
  ref?: string | null;
  force?: boolean;
};

/**
 * Starts (or rebuilds) a ref's index for a maintainer: a project the viewer cannot read is NOT_FOUND,
 * exactly as a missing one; one they can read but not maintain is FORBIDDEN.
 */
export async function requestCodeIndex(options: RequestCodeIndexOptions): Promise<{ index: CodeIndex; jobId: string }> {
  const project = await findReadableProject(options.prisma, options.viewer, { fullPath: options.projectPath });
  if (!project) throw notFound('The project does not exist or you cannot see it');
  if (!options.viewer.user.admin && (await projectAccessLevel(options.prisma, options.viewer, project)) < ACCESS_LEVELS.maintainer) {
    throw forbidden('Starting an index needs the Maintainer role or higher on the project');
  }
  const ref = validateRef(options.ref?.trim() || project.defaultBranch);
  const { index, jobId } = await requestIndexRun(options, { projectId: project.id, ref, force: options.force ?? false, reason: 'api' });
  return { index: index!, jobId };
}

/**
 * Queues a rebuild of every index whose vectors came from another embedder or chunker than the
 * configured ones (after EMBEDDINGS_PROVIDER or the model changed). Each rebuild writes a new
 * snapshot; search keeps using the old one until it is complete.
 */
export async function reindexStale(options: {
  prisma: PrismaClient;
  queues: Pick<Queues, 'enqueueIndex'>;
  embedderVersion: string;
  chunkerVersion: string;
}): Promise<number> {
  const stale = await options.prisma.codeIndex.findMany({
    where: {
      activeSnapshot: { OR: [{ embedderVersion: { not: options.embedderVersion } }, { chunkerVersion: { not: options.chunkerVersion } }] },
    },
    select: { projectId: true, ref: true },
  });
  for (const index of stale) await options.queues.enqueueIndex({ projectId: index.projectId, ref: index.ref, reason: 'embedder-change' });
  return stale.length;
}
