import type { DuoAccess } from '../auth/duo-access';
import type { CodebaseCategory } from '../auth/policies';
import type { Viewer } from '../auth/viewer';
import type { PrismaClient } from '../db/prisma';
import { isAppError } from '../errors';
import type { Embedder } from '../llm/embedders/embedder';
import type { Reranking } from '../llm/rerankers/reranker';
import type { Logger } from '../logger';
import type { Queues } from '../queues';
import { isExcludedBy } from '../auth/context-exclusions';
import { awaitIndex, type IndexRunProgress } from '../search/await-index';
import { indexReadiness, readLiveSnapshot, type IndexReadiness, type ReadyIndex } from '../search/index-readiness';
import { authorizeCodebaseRead, type CodebaseRead } from '../search/read-codebase';
import { directoryFiles, directorySize } from '../search/snapshot-files';
import { searchCode, type Confidence } from '../search/search-code';

/** A piece of code an answer was grounded in: listed in the answer's `extras.sources`. */
export type CodeSource = {
  projectPath: string;
  ref: string;
  commitSha: string;
  path: string;
  startLine: number;
  endLine: number;
  blobId: string;
  score: number;
};

/** One piece of code the tool found, best first (what `content` holds for the prompt, as data). */
export type FoundCode = {
  path: string;
  startLine: number;
  endLine: number;
  language: string | null;
  symbol: string | null;
  content: string;
};

/** What a chat tool gives back; tools never throw into the chat loop. */
export type ToolResult = {
  status: 'ok' | 'error' | 'not_executed';
  /** For the prompt when ok; for the user otherwise (it says why there is no code). */
  content: string;
  sources: CodeSource[];
  confidence?: Confidence;
  /** When ok: where was searched ("group/project (main, commit 0123abcd4567)") and the code found, best first. */
  where?: string;
  found?: FoundCode[];
  /** Set when there is no code because the ref's first index is still being built: `content` says how far it is. */
  indexing?: { progress: IndexRunProgress | null; remainingMs: number | null };
};

/** How a chat answer waits for a ref's first index (the tool's callers that cannot wait leave it out). */
export type IndexWait = {
  /** The longest wait; 0 waits not at all. */
  timeoutMs: number;
  /** Gets each change of the run's progress in words ("Indexing group/project: 412 of 577 files…"). */
  onProgress: (status: string) => void | Promise<void>;
  signal?: AbortSignal;
};

export type SemanticSearchToolInput = {
  prisma: PrismaClient;
  queues: Pick<Queues, 'enqueueIndex'>;
  embedder: Embedder;
  /** RERANK_PROVIDER's reranker of the best files, or none. */
  reranking?: Reranking | null;
  logger: Logger;
  viewer: Viewer;
  access: DuoAccess;
  /** A full path, or a numeric id as a string: the tool checks the viewer may search it. */
  project: string;
  /** Which context feature asks (include_repository_context or include_directory_context). */
  category: CodebaseCategory;
  ref: string | null;
  /** Normalised, '' for the whole repository. */
  directory: string;
  question: string;
  /** Hits for the prompt. Default 8 (GitLab's classic chat tool used 10). */
  limit?: number;
  /** A directory with at most this many characters of code is given whole. Default 20,000. */
  wholeDirectoryChars?: number;
  /** Characters of found code given to the prompt, snippets best first until they fill it. Default CODE_BUDGET_CHARS. */
  maxCodeChars?: number;
  requestId?: string;
  /** DATA_DIR: a ref other than the default branch is looked up in the repository before indexing starts for it. */
  dataDir?: string;
  /** Wait, bounded, for a first index run the search started or found under way, instead of answering without code at once. */
  wait?: IndexWait;
};

/** The status a waiting answer streams. */
export function indexingStatus(projectPath: string, progress: IndexRunProgress | null): string {
  if (!progress || progress.state === 'pending') return `Waiting for an indexing worker for ${projectPath}…`;
  if (progress.filesTotal === null) return `Indexing ${projectPath}: listing its files…`;
  return `Indexing ${projectPath}: ${progress.filesIndexed} of ${progress.filesTotal} files…`;
}

const seconds = (ms: number) =>
  ms < 90_000 ? `about ${Math.max(5, Math.round(ms / 5_000) * 5)} seconds` : `about ${Math.round(ms / 60_000)} minutes`;

/** Why an answer has no code from a ref whose first index is still being built, how far it is, and what to do. */
export function stillIndexingMessage(name: string, wait: { progress: IndexRunProgress | null; remainingMs: number | null }): string {
  const { progress, remainingMs } = wait;
  const far =
    progress?.state === 'indexing' && progress.filesTotal !== null
      ? `${progress.filesIndexed} of ${progress.filesTotal} files so far${remainingMs !== null ? `, ${seconds(remainingMs)} to go` : ''}`
      : progress?.state === 'indexing'
        ? 'its files are being listed'
        : 'it is waiting for an indexing worker';
  return (
    `The code of ${name} is still being indexed (${far}), so this answer does not use it. Ask again once the index is ready ` +
    '(the code index status shows it); files you attach meanwhile are used as usual.'
  );
}

/**
 * Found code for the prompt: about 6,000 tokens, a quarter of the prompt's default budget
 * (build-prompt.ts), so the question, the other context and the history keep the rest.
 */
export const CODE_BUDGET_CHARS = 24_000;

/**
 * The snippets (best first) that fit in `maxChars` of code, in the same order: one that does not fit
 * is left out and the next smaller ones still may fit; the first is always given.
 */
export function withinBudget<T extends { content: string }>(snippets: readonly T[], maxChars: number): T[] {
  const kept: T[] = [];
  let used = 0;
  for (const snippet of snippets) {
    if (kept.length > 0 && used + snippet.content.length > maxChars) continue;
    kept.push(snippet);
    used += snippet.content.length;
  }
  return kept;
}

const attribute = (value: string) => value.replace(/[\n"<>]/g, ' ');

function codeBlock(options: { path: string; startLine: number; endLine: number; language: string | null; content: string }): string {
  const language = options.language ? ` language="${options.language}"` : '';
  return `<code path="${attribute(options.path)}" lines="${options.startLine}-${options.endLine}"${language}>\n${options.content}\n</code>`;
}

/**
 * The Semantic Search Tool: runs whenever a chat message carries repository or directory context.
 * Searches the ref's index (or gives a small directory whole) and returns the code for the prompt
 * with its sources; when the index is not ready it starts it and says so.
 */
export async function semanticSearchTool(input: SemanticSearchToolInput): Promise<ToolResult> {
  let read: CodebaseRead;
  try {
    // Checked again here: a chat job may run after the user lost access. One statement reads the
    // project with its ref's index and active snapshot, which indexReadiness then takes as read.
    read = await authorizeCodebaseRead({ ...input, field: 'additionalContext.id' });
  } catch (error) {
    if (!isAppError(error)) throw error;
    return { status: 'not_executed', content: error.userMessage, sources: [] };
  }
  const { project } = read;
  try {
    let readiness = await indexReadiness({
      prisma: input.prisma,
      queues: input.queues,
      project,
      ref: input.ref,
      directory: input.directory,
      read,
      dataDir: input.dataDir,
    });
    if (readiness.status !== 'ready') {
      const waited = await waitForFirstIndex(input, project, readiness);
      if (waited.status !== 'ready') return waited;
      readiness = waited;
    }
    // Read on a snapshot that stays whole throughout (readLiveSnapshot): a push activating another one must not empty the answer.
    const answer = async (ready: ReadyIndex): Promise<ToolResult> => {
      const { scope, commitSha } = ready;
      const ref = ready.index.ref;
      const where =
        `${project.fullPath}${scope.directory ? `/${scope.directory.slice(0, -1)}` : ''} (${ref}, commit ` + `${commitSha.slice(0, 12)})`;
      const source = (hit: { path: string; startLine: number; endLine: number; blob: string; score: number }): CodeSource => ({
        projectPath: project.fullPath,
        ref,
        commitSha,
        path: hit.path,
        startLine: hit.startLine,
        endLine: hit.endLine,
        blobId: hit.blob,
        score: Number(hit.score.toFixed(4)),
      });
      if (scope.directory) {
        const size = await directorySize(input.prisma, scope);
        if (size.files > 0 && size.chars <= (input.wholeDirectoryChars ?? 20_000)) {
          const excluded = isExcludedBy(scope.exclusions);
          const files = (await directoryFiles(input.prisma, scope)).filter((file) => !excluded(file.path));
          return {
            status: 'ok',
            content: [
              `All ${files.length} files of ${where}:`,
              ...files.map((file) => codeBlock({ ...file, startLine: 1, endLine: file.lines })),
            ].join('\n\n'),
            sources: files.map((file) => source({ path: file.path, startLine: 1, endLine: file.lines, blob: file.blob, score: 1 })),
            confidence: 'high',
            where,
            found: files.map((file) => ({
              path: file.path,
              startLine: 1,
              endLine: file.lines,
              language: file.language,
              symbol: null,
              content: file.content,
            })),
          };
        }
      }
      const result = await searchCode({
        prisma: input.prisma,
        embedder: input.embedder,
        reranking: input.reranking,
        scope,
        query: input.question,
        limit: input.limit ?? 8,
      });
      // Files best first, each file's snippets best first (choose-snippets.ts): what answers best reaches the model first.
      const hits = withinBudget(
        result.files.flatMap((file) =>
          file.snippets.map((snippet) => ({ ...snippet, path: file.path, blob: file.blob, language: file.language })),
        ),
        input.maxCodeChars ?? CODE_BUDGET_CHARS,
      );
      if (!hits.length)
        return { status: 'ok', content: `No code in ${where} matched the question.`, sources: [], confidence: 'low', where, found: [] };
      return {
        status: 'ok',
        content: [
          `Code from ${where} found for the question (confidence ${result.confidence}):`,
          ...hits.map((hit) => codeBlock(hit)),
        ].join('\n\n'),
        sources: hits.map(source),
        confidence: result.confidence,
        where,
        found: hits.map((hit) => ({
          path: hit.path,
          startLine: hit.startLine,
          endLine: hit.endLine,
          language: hit.language,
          symbol: hit.symbol,
          content: hit.content,
        })),
      };
    };
    const { result } = await readLiveSnapshot(
      { prisma: input.prisma, queues: input.queues, project, directory: input.directory, ready: readiness },
      answer,
    );
    return result;
  } catch (error) {
    // The question's own fault (a ref the repository does not have, say): said as it is, as the other transports say it.
    if (isAppError(error) && error.code !== 'INTERNAL') return { status: 'not_executed', content: error.userMessage, sources: [] };
    input.logger.warn({ event: 'code_search_failed', requestId: input.requestId, projectId: project.id, err: error }, 'code search failed');
    return { status: 'error', content: `Searching the code of ${project.fullPath} failed; the answer could not use it.`, sources: [] };
  }
}

/**
 * A ref's first index, waited for when the caller can wait (a chat answer) and the run can end in
 * time: the readiness once it is ready, else the tool's answer without code. A failed index, or a
 * caller that cannot wait, gets what readiness said.
 */
async function waitForFirstIndex(
  input: SemanticSearchToolInput,
  project: CodebaseRead['project'],
  readiness: Extract<IndexReadiness, { status: 'not_ready' }>,
): Promise<Extract<IndexReadiness, { status: 'ready' }> | ToolResult> {
  if (readiness.reason === 'failed') return { status: 'not_executed', content: readiness.message, sources: [] };
  const ref = readiness.index?.ref ?? (input.ref?.trim() || project.defaultBranch);
  const name = `${project.fullPath} (${ref})`;
  const wait = input.wait;
  if (!wait || wait.timeoutMs <= 0) {
    const index = readiness.index;
    const progress = index ? { state: index.state, filesIndexed: index.filesIndexed, filesTotal: index.filesTotal } : null;
    const indexing = { progress, remainingMs: null };
    return { status: 'not_executed', content: stillIndexingMessage(name, indexing), sources: [], indexing };
  }
  const waited = await awaitIndex({
    prisma: input.prisma,
    projectId: project.id,
    ref,
    timeoutMs: wait.timeoutMs,
    signal: wait.signal,
    onProgress: (progress) => wait.onProgress(indexingStatus(project.fullPath, progress)),
  });
  if (waited.outcome === 'too_slow') {
    const indexing = { progress: waited.progress, remainingMs: waited.remainingMs };
    return { status: 'not_executed', content: stillIndexingMessage(name, indexing), sources: [], indexing };
  }
  if (waited.outcome === 'aborted') return { status: 'not_executed', content: readiness.message, sources: [] };
  const after = await indexReadiness({
    prisma: input.prisma,
    queues: input.queues,
    project,
    ref,
    directory: input.directory,
    startIndexing: false,
  });
  return after.status === 'ready' ? after : { status: 'not_executed', content: after.message, sources: [] };
}
