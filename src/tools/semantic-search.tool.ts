import type { DuoAccess } from '../auth/duo-access';
import type { CodebaseCategory } from '../auth/policies';
import type { Viewer } from '../auth/viewer';
import type { PrismaClient } from '../db/prisma';
import { isAppError } from '../errors';
import type { Embedder } from '../llm/embedders/embedder';
import type { Logger } from '../logger';
import type { Queues } from '../queues';
import { isExcludedBy } from '../auth/context-exclusions';
import { indexReadiness, readLiveSnapshot, type ReadyIndex } from '../search/index-readiness';
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
};

export type SemanticSearchToolInput = {
  prisma: PrismaClient;
  queues: Pick<Queues, 'enqueueIndex'>;
  embedder: Embedder;
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
  requestId?: string;
  /** DATA_DIR: a ref other than the default branch is looked up in the repository before indexing starts for it. */
  dataDir?: string;
};

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
    const readiness = await indexReadiness({
      prisma: input.prisma,
      queues: input.queues,
      project,
      ref: input.ref,
      directory: input.directory,
      read,
      dataDir: input.dataDir,
    });
    if (readiness.status !== 'ready') return { status: 'not_executed', content: readiness.message, sources: [] };
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
        scope,
        query: input.question,
        limit: input.limit ?? 8,
      });
      const hits = result.files.flatMap((file) =>
        file.snippets.map((snippet) => ({ ...snippet, path: file.path, blob: file.blob, language: file.language })),
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
