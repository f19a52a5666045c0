import { codebaseProjectWhere, findCodeReadableProject, type CodebaseCategory } from '../auth/policies';
import type { Viewer } from '../auth/viewer';
import type { CodeIndex, PrismaClient, Project } from '../db/prisma';
import type { DuoAccess } from '../auth/duo-access';
import { AppError, NOT_AVAILABLE } from '../errors';
import { validateRef } from '../indexing/git-reader';
import type { Embedder } from '../llm/embedders/embedder';
import type { Reranking } from '../llm/rerankers/reranker';
import type { Queues } from '../queues';
import { indexReadiness, readLiveSnapshot } from './index-readiness';
import { searchCode, type RetrievalMode, type SearchCodeResult } from './search-code';
import { authorizeCodebaseRead } from './read-codebase';
import { normalizeDirectory } from './search-scope';

export type CodebaseSearchOptions = {
  prisma: PrismaClient;
  queues: Pick<Queues, 'enqueueIndex'>;
  embedder: Embedder;
  /** RERANK_PROVIDER's reranker, or none. */
  reranking?: Reranking | null;
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
  /** DATA_DIR: a ref other than the default branch is looked up in the repository before indexing starts for it. */
  dataDir?: string;
};

/** codebaseSearch and the REST semantic search: authorize, find the index, search. */
export async function codebaseSearch(
  options: CodebaseSearchOptions,
): Promise<SearchCodeResult & { commitSha: string; ref: string; project: Project }> {
  const category: CodebaseCategory = options.directory?.trim() ? 'directory' : 'repository';
  // The project, its ref's index and active snapshot in one statement; the policy first, then the directory and the ref.
  const read = await authorizeCodebaseRead({ ...options, category, field: 'projectPath' });
  const { project } = read;
  const directory = normalizeDirectory(options.directory, 'directory');
  const readiness = await indexReadiness({ ...options, project, directory, read });
  if (readiness.status !== 'ready') throw new AppError({ code: 'CONFLICT', userMessage: readiness.message });
  const { result, ready } = await readLiveSnapshot({ ...options, project, directory, ready: readiness }, (live) =>
    searchCode({
      prisma: options.prisma,
      embedder: options.embedder,
      scope: live.scope,
      query: options.query,
      limit: options.limit,
      candidates: options.candidates,
      mode: options.mode,
      reranking: options.reranking,
    }),
  );
  return { ...result, commitSha: ready.commitSha, ref: ready.index.ref, project };
}

export type CodeIndexStatusOptions = {
  prisma: PrismaClient;
  viewer: Viewer;
  /** A full path, or a numeric id as a string. */
  project: string;
  /** Default: the project's default branch. */
  ref?: string | null;
};

/** A ref's index as the user may see it: the user must be able to read its code (hidden answers like missing). */
export async function codeIndexStatus(
  options: CodeIndexStatusOptions,
): Promise<{ project: Project; ref: string; index: CodeIndex | null; searchable: boolean }> {
  const where = codebaseProjectWhere(options.project);
  const project = where ? await findCodeReadableProject(options.prisma, options.viewer, where) : null;
  if (!project) throw new AppError({ code: 'NOT_FOUND', userMessage: NOT_AVAILABLE, field: 'project_id' });
  const ref = validateRef(options.ref?.trim() || project.defaultBranch);
  const index = await options.prisma.codeIndex.findUnique({ where: { projectId_ref: { projectId: project.id, ref } } });
  return { project, ref, index, searchable: Boolean(index?.activeSnapshotId) };
}
