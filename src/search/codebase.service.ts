import { authorizeCodebase, type CodebaseCategory } from '../auth/policies';
import type { Viewer } from '../auth/viewer';
import type { PrismaClient } from '../db/prisma';
import type { DuoAccess } from '../auth/duo-access';
import { AppError } from '../errors';
import type { Embedder } from '../llm/embedders/embedder';
import type { Queues } from '../queues';
import { indexReadiness } from './index-readiness';
import { searchCode, type RetrievalMode, type SearchCodeResult } from './search-code';
import { normalizeDirectory } from './search-scope';

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

