import type { Project } from '../db/prisma';
import { projectPageUrl } from '../instance';
import type { SearchCodeResult } from './search-code';

/** GitLab's limits on semantic code search (REST `search/semantic` and the MCP `semantic_code_search` tool). */
export const SEMANTIC_SEARCH_LIMITS = {
  queryChars: 1000,
  directoryChars: 100,
  knn: { min: 1, max: 100, default: 64 },
  limit: { min: 1, max: 100, default: 20 },
} as const;

/** GitLab's overall confidence; `unknown` when nothing was found. */
export type SemanticConfidence = 'high' | 'medium' | 'low' | 'unknown';

export type SnippetRange = { start_line: number; end_line: number; content: string; score: number };

/** One file of GitLab's semantic search answer (`API::Entities::Ai::SemanticCode`). */
export type SemanticFileResult = {
  path: string;
  project_id: number;
  language: string | null;
  blob_id: string;
  file_url: string;
  score: number;
  snippet_ranges: SnippetRange[];
};

/** GitLab's answer, with the ref and commit searched as additions. */
export type SemanticSearchAnswer = { confidence: SemanticConfidence; results: SemanticFileResult[]; ref: string; commit_sha: string };

export type PresentSemanticOptions = {
  result: SearchCodeResult & { commitSha: string; ref: string; project: Project };
  /** The instance's public URL, without a trailing slash. */
  externalUrl: string;
};

const round = (score: number) => Number(score.toFixed(4));

/** Maps a codebase search to GitLab's shape: files by score, each with its line ranges and a link to the blob. */
export function presentSemanticResults(options: PresentSemanticOptions): SemanticSearchAnswer {
  const { result, externalUrl } = options;
  // A project mirrored from GitLab links to GitLab's own page of it (web_url).
  const blobBase = `${projectPageUrl(externalUrl, result.project)}/-/blob/${encodeURIComponent(result.ref)}`;
  return {
    confidence: result.files.length === 0 ? 'unknown' : result.confidence,
    results: result.files.map((file) => ({
      path: file.path,
      project_id: result.project.id,
      language: file.language,
      blob_id: file.blob,
      file_url: `${blobBase}/${file.path.split('/').map(encodeURIComponent).join('/')}`,
      score: round(file.score),
      // groupHits already merged touching ranges and put the one that answers best first.
      snippet_ranges: file.snippets.map((snippet) => ({
        start_line: snippet.startLine,
        end_line: snippet.endLine,
        content: snippet.content,
        score: round(snippet.score),
      })),
    })),
    ref: result.ref,
    commit_sha: result.commitSha,
  };
}

/** The text an MCP client's model reads, in GitLab's layout: confidence, then numbered files with their line ranges. */
export function formatSemanticResultsText(answer: SemanticSearchAnswer): string {
  const files = answer.results.map((file, index) => {
    const ranges = file.snippet_ranges.map((range) => `[Lines ${range.start_line}-${range.end_line}]\n${range.content}`).join('\n');
    return `${index + 1}. ${file.path} (score: ${file.score.toFixed(4)})\n${ranges}`;
  });
  const body = files.length ? files.join('\n\n') : 'No code matched the query.';
  return `Confidence: ${answer.confidence.toUpperCase()}\n\n${body}`;
}

/** Why a `directory_path` is refused (GitLab: relative, at most 100 characters), or null when it is fine. */
export function directoryPathProblem(directory: string): string | null {
  if (directory.length > SEMANTIC_SEARCH_LIMITS.directoryChars)
    return `directory_path must be less than ${SEMANTIC_SEARCH_LIMITS.directoryChars} characters`;
  if (directory.startsWith('/') || directory.split('/').includes('..'))
    return 'directory_path must not start with / or contain .. segments';
  return null;
}
