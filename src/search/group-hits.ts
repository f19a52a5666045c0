import { chooseSnippets, snippetIntent } from './choose-snippets';
import { queryTerms } from './text-query';

/** One chunk found in one file. */
export type ChunkHit = {
  path: string;
  blob: string;
  startLine: number;
  endLine: number;
  content: string;
  score: number;
  language: string | null;
  symbol: string | null;
};

/** A file's snippets: the hits that answer, overlapping and adjacent line ranges merged, the best first. */
export type FileHits = {
  path: string;
  blob: string;
  language: string | null;
  /** The best snippet's score; with a file ranking (GroupOptions.fileScores), the file's score scaled so the first file's is 1. */
  score: number;
  snippets: Array<Pick<ChunkHit, 'startLine' | 'endLine' | 'content' | 'score' | 'symbol'>>;
};

export type GroupOptions = {
  /** The question: which snippets answer it (choose-snippets.ts). Default none: boilerplate is left out all the same. */
  question?: string;
  /** Snippets kept per file (the best ones), so one big file cannot fill the result. Default 3. */
  maxPerFile?: number;
  /** Scores of whole files (file-ranking.ts): files are ordered by these instead of their best snippet. */
  fileScores?: ReadonlyMap<string, number>;
};

/**
 * Groups hits (best first) by file and chooses each file's snippets (choose-snippets.ts: the best
 * few that answer, boilerplate left out, touching ranges merged, best first), and orders files by
 * their best score or by fileScores.
 */
export function groupHits(hits: readonly ChunkHit[], options: GroupOptions = {}): FileHits[] {
  const intent = snippetIntent(options.question ?? '');
  const terms = queryTerms(options.question ?? '');
  const files = new Map<string, FileHits>();
  for (const hit of hits) {
    let file = files.get(hit.path);
    if (!file) {
      file = { path: hit.path, blob: hit.blob, language: hit.language, score: hit.score, snippets: [] };
      files.set(hit.path, file);
    }
    file.snippets.push({ startLine: hit.startLine, endLine: hit.endLine, content: hit.content, score: hit.score, symbol: hit.symbol });
  }
  for (const file of files.values()) {
    file.snippets = chooseSnippets(file.snippets, {
      path: file.path,
      language: file.language,
      intent,
      terms,
      question: options.question,
      maxPerFile: options.maxPerFile,
    });
    file.score = Math.max(...file.snippets.map((snippet) => snippet.score));
  }
  const fileScores = options.fileScores;
  if (!fileScores) return [...files.values()].sort((a, b) => b.score - a.score);
  const top = Math.max(0, ...[...files.keys()].map((path) => fileScores.get(path) ?? 0));
  for (const file of files.values()) file.score = top > 0 ? (fileScores.get(file.path) ?? 0) / top : 0;
  return [...files.values()].sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
}
