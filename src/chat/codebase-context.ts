import type { Viewer } from '../auth/viewer';
import type { PrismaClient } from '../db/prisma';
import type { DuoAccess } from '../auth/duo-access';
import { badInput } from '../errors';
import { validateRef } from '../indexing/git-reader';
import type { Embedder } from '../llm/embedders/embedder';
import type { Reranking } from '../llm/rerankers/reranker';
import type { Logger } from '../logger';
import type { Queues } from '../queues';
import { authorizeCodebase, type CodebaseCategory } from '../auth/policies';
import { normalizeDirectory } from '../search/search-scope';
import { semanticSearchTool, type CodeSource, type IndexWait, type ToolResult } from '../tools/semantic-search.tool';
import type { ContextItem } from './context-items';
import { numericIdOf } from '../global-id';

/** What a repository or directory context item asks to search. */
export type CodebaseTarget = {
  category: CodebaseCategory;
  /** The project's full path or numeric id. */
  project: string;
  directory: string;
  ref: string | null;
};

const text = (value: unknown): string | null =>
  typeof value === 'string' && value.trim() ? value.trim() : typeof value === 'number' ? String(value) : null;

/**
 * Reads the target of a REPOSITORY item (`id` = project path or id; `metadata.directory`,
 * `metadata.branch`) or a DIRECTORY item (`metadata.relativePath` or `metadata.directory`, the
 * project in `metadata.projectPath`/`metadata.projectId`/`metadata.project`, else the request's
 * project). Null for other categories. Bad directories and branches are BAD_USER_INPUT.
 */
export function codebaseTargetOf(item: ContextItem, requestProjectId: number | null): CodebaseTarget | null {
  if (item.category !== 'repository' && item.category !== 'directory') return null;
  const metadata = item.metadata ?? {};
  const directoryInput =
    item.category === 'directory' ? (text(metadata.relativePath) ?? text(metadata.directory) ?? item.id) : text(metadata.directory);
  const directory = normalizeDirectory(directoryInput, 'additionalContext.metadata.directory');
  const branch = text(metadata.branch);
  const ref = branch ? validateRef(branch) : null;
  const project =
    item.category === 'repository'
      ? item.id
      : (text(metadata.projectPath) ??
        text(metadata.projectId) ??
        text(metadata.project) ??
        (requestProjectId !== null ? String(requestProjectId) : null));
  if (!project)
    throw badInput(
      `additionalContext (${JSON.stringify(item.id)}): a DIRECTORY item needs its project (metadata.projectPath or projectId)`,
      'additionalContext.metadata',
    );
  // A gid (gid://gitlab/Project/7) names the project by id.
  const projectId = numericIdOf('Project', project);
  return { category: item.category, project: projectId !== null ? String(projectId) : project, directory, ref };
}

export type AuthorizeItemsOptions = {
  prisma: PrismaClient;
  viewer: Viewer;
  access: DuoAccess;
  items: readonly ContextItem[];
  requestProjectId: number | null;
};

/** Checks every repository and directory item before anything is stored: the project is readable, has Duo on, the feature is there. */
export async function authorizeCodebaseItems(options: AuthorizeItemsOptions): Promise<void> {
  for (const item of options.items) {
    const target = codebaseTargetOf(item, options.requestProjectId);
    if (!target) continue;
    await authorizeCodebase({ ...options, project: target.project, category: target.category, field: 'additionalContext.id' });
  }
}

export type GroundOptions = {
  prisma: PrismaClient;
  queues: Pick<Queues, 'enqueueIndex'>;
  embedder: Embedder;
  /** RERANK_PROVIDER's reranker of the code found, or none. */
  reranking?: Reranking | null;
  logger: Logger;
  viewer: Viewer;
  access: DuoAccess;
  items: readonly ContextItem[];
  requestProjectId: number | null;
  question: string;
  requestId: string;
  /** DATA_DIR: a ref other than the default branch is looked up in the repository before indexing starts for it. */
  dataDir?: string;
  /** Wait (bounded) for a first index a search started, reporting its progress; without it the answer has no code at once. */
  wait?: IndexWait;
};

export type Grounding = {
  /** The items with each repository/directory item's content set to the code found. */
  items: ContextItem[];
  sources: CodeSource[];
  /** One result per searched item, in order. */
  results: ToolResult[];
};

/**
 * Runs the Semantic Search Tool for every repository and directory item (always: no model
 * decides whether to search) and puts what it found into the item's content. The tool checks
 * authorization again: the worker may run after the user lost access.
 */
export async function groundCodebaseItems(options: GroundOptions): Promise<Grounding> {
  const items: ContextItem[] = [];
  const sources: CodeSource[] = [];
  const results: ToolResult[] = [];
  for (const item of options.items) {
    const target = codebaseTargetOf(item, options.requestProjectId);
    if (!target) {
      items.push(item);
      continue;
    }
    const result = await semanticSearchTool({
      ...options,
      project: target.project,
      category: target.category,
      ref: target.ref,
      directory: target.directory,
    });
    results.push(result);
    sources.push(...result.sources);
    items.push({ ...item, content: result.content });
  }
  return { items, sources, results };
}
