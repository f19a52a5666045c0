import { findReadableProject } from '../auth/policies';
import type { Viewer } from '../auth/viewer';
import type { CodeIndex, PrismaClient, Project } from '../db/prisma';
import type { DuoAccess } from '../auth/duo-access';
import { AppError, forbidden, NOT_AVAILABLE } from '../errors';
import { markPending } from '../indexing/code-index.service';
import { validateRef } from '../indexing/git-reader';
import type { Embedder } from '../llm/embedders/embedder';
import type { Queues } from '../queues';
import { searchCode, type RetrievalMode, type SearchCodeResult } from './search-code';
import { normalizeDirectory, type SearchScope } from './search-scope';


export type CodebaseCategory = 'repository' | 'directory';

export type AuthorizeCodebaseOptions = {
  prisma: PrismaClient;
  viewer: Viewer;
  /** May still be on its way: it is awaited together with the project. */
  access: DuoAccess | Promise<DuoAccess>;
  /** A full path, or a numeric id as a string. */
  project: string;
  /** Which feature the request uses: include_repository_context or include_directory_context. */
  category: CodebaseCategory;
  /** The input field to name in errors. */
  field: string;
};

/**
 * Who may search a project's code: the user can read it (a hidden project answers exactly like a
 * missing one), the project has Duo features on, and the user has the context feature.
 */
export async function authorizeCodebase(options: AuthorizeCodebaseOptions): Promise<Project> {
  const reference = options.project.trim();
  const where = /^\d+$/.test(reference) && reference.length < 16 ? { id: Number(reference) } : { fullPath: reference.replace(/^\/+|\/+$/g, '') };
  const [access, project] = await Promise.all([options.access, reference ? findReadableProject(options.prisma, options.viewer, where) : null]);
  // A directory is part of the repository: either feature lets the user search one.
  const allowed = access.chatContextCategories.includes(options.category) || (options.category === 'directory' && access.chatContextCategories.includes('repository'));
  if (!allowed) {
    throw new AppError({
      code: 'FORBIDDEN',
      userMessage: `${options.category.toUpperCase()} context is not available to you (include_${options.category}_context is not in duoChatAvailableFeatures)`,
      field: options.field,
    });
  }
  if (!project) throw new AppError({ code: 'NOT_FOUND', userMessage: NOT_AVAILABLE, field: options.field });
  if (!project.duoFeaturesEnabled) throw forbidden(`GitLab Duo features are turned off for ${project.fullPath}, so its code cannot be used as context`);
  return project;
}

/** A ref's index as search needs it: searchable, or why not (with words for the user). */
export type IndexReadiness =
  | { status: 'ready'; index: CodeIndex; scope: SearchScope & { embedderVersion: string; exclusions: readonly string[] }; commitSha: string }
  | { status: 'not_ready'; index: CodeIndex | null; reason: 'started' | 'pending' | 'indexing' | 'failed'; message: string };

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
};

/** Finds the snapshot search should read, starting an index run for a ref that has none. */
export async function indexReadiness(options: ReadinessOptions): Promise<IndexReadiness> {
  const { prisma, project } = options;
  const ref = validateRef(options.ref?.trim() || project.defaultBranch);
  const directory = options.directory ?? '';
  const index = await prisma.codeIndex.findUnique({ where: { projectId_ref: { projectId: project.id, ref } }, include: { activeSnapshot: true } });
  const snapshot = index?.activeSnapshot;
  if (index && snapshot) {
    const { activeSnapshot: _snapshot, ...row } = index;
    return {
      status: 'ready',
      index: row,
      commitSha: snapshot.commitSha,
      scope: { projectId: project.id, snapshotId: snapshot.id, directory, embedderVersion: snapshot.embedderVersion, exclusions: project.contextExclusions },
    };
  }
  const name = `${project.fullPath} (${ref})`;
  if (index?.state === 'failed') {
    return { status: 'not_ready', index, reason: 'failed', message: `The code index of ${name} failed: ${index.lastError ?? 'unknown error'}. A maintainer can fix the cause and rebuild it.` };
  }
  if (index && (index.state === 'indexing' || index.state === 'pending')) {
    return { status: 'not_ready', index, reason: index.state, message: `The code of ${name} is still being indexed (${index.filesIndexed} files so far). Ask again in a moment.` };
  }
  if (options.startIndexing === false) return { status: 'not_ready', index: index ?? null, reason: 'pending', message: `${name} is not indexed.` };
  const pending = await markPending(prisma, { projectId: project.id, ref });
  await options.queues.enqueueIndex({ projectId: project.id, ref, reason: 'chat' });
  return { status: 'not_ready', index: pending, reason: 'started', message: `The code of ${name} was not indexed yet: indexing has started. Ask again shortly.` };
}

export type CodebaseSearchOptions = {
  prisma: PrismaClient;
  queues: Pick<Queues, 'enqueueIndex'>;
  embedder: Embedder;
  viewer: Viewer;
  access: DuoAccess | Promise<DuoAccess>;
  project: string;
  query: string;
  directory?: string | null;
  ref?: string | null;
  limit?: number;
  /** Candidates per ranking before fusion (GitLab's knn). Default 50. */
  candidates?: number;
  mode?: RetrievalMode;
};

/** codebaseSearch and the REST semantic search: authorize, find the index, search. */
export async function codebaseSearch(options: CodebaseSearchOptions): Promise<SearchCodeResult & { commitSha: string }> {
  const category: CodebaseCategory = options.directory?.trim() ? 'directory' : 'repository';
  const project = await authorizeCodebase({ ...options, category, field: 'projectPath' });
  const readiness = await indexReadiness({ ...options, project, directory: normalizeDirectory(options.directory, 'directory') });
  if (readiness.status !== 'ready') throw new AppError({ code: 'CONFLICT', userMessage: readiness.message });
  const result = await searchCode({ prisma: options.prisma, embedder: options.embedder, scope: readiness.scope, query: options.query, limit: options.limit, candidates: options.candidates, mode: options.mode });
  return { ...result, commitSha: readiness.commitSha };
}

