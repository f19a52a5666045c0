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

/** A file's hits, overlapping and adjacent line ranges merged. */
export type FileHits = {
  path: string;
  blob: string;
  language: string | null;
  /** The best snippet's score; with a file ranking (GroupOptions.fileScores), the file's score scaled so the first file's is 1. */
  score: number;
  snippets: Array<Pick<ChunkHit, 'startLine' | 'endLine' | 'content' | 'score' | 'symbol'>>;
};

export type GroupOptions = {
  /** Snippets kept per file (the best ones), so one big file cannot fill the result. Default 3. */
  maxPerFile?: number;
  /** Scores of whole files (file-ranking.ts): files are ordered by these instead of their best snippet. */
  fileScores?: ReadonlyMap<string, number>;
};

function merge(a: FileHits['snippets'][number], b: FileHits['snippets'][number]): FileHits['snippets'][number] {
  const lines = new Map<number, string>();
  for (const snippet of [a, b]) snippet.content.split('\n').forEach((line, index) => lines.set(snippet.startLine + index, line));
  const startLine = Math.min(a.startLine, b.startLine);
  const endLine = Math.max(a.endLine, b.endLine);
  const content: string[] = [];
  for (let line = startLine; line <= endLine; line += 1) content.push(lines.get(line) ?? '');
  return {
    startLine,
    endLine,
    content: content.join('\n'),
    score: Math.max(a.score, b.score),
    symbol: a.score >= b.score ? a.symbol : b.symbol,
  };
}

/**
 * Groups hits (best first) by file, keeps the best few per file, merges ranges that overlap or
 * touch, and orders files by their best score and snippets by line.
 */
export function groupHits(hits: readonly ChunkHit[], options: GroupOptions = {}): FileHits[] {
  const maxPerFile = options.maxPerFile ?? 3;
  const files = new Map<string, FileHits>();
  for (const hit of hits) {
    let file = files.get(hit.path);
    if (!file) {
      file = { path: hit.path, blob: hit.blob, language: hit.language, score: hit.score, snippets: [] };
      files.set(hit.path, file);
    }
    if (file.snippets.length >= maxPerFile) continue;
    file.snippets.push({ startLine: hit.startLine, endLine: hit.endLine, content: hit.content, score: hit.score, symbol: hit.symbol });
  }
  for (const file of files.values()) {
    const sorted = [...file.snippets].sort((a, b) => a.startLine - b.startLine);
    const merged: FileHits['snippets'] = [];
    for (const snippet of sorted) {
      const last = merged[merged.length - 1];
      if (last && snippet.startLine <= last.endLine + 1) merged[merged.length - 1] = merge(last, snippet);
      else merged.push(snippet);
    }
    file.snippets = merged;
    file.score = Math.max(...merged.map((snippet) => snippet.score));
  }
  const fileScores = options.fileScores;
  if (!fileScores) return [...files.values()].sort((a, b) => b.score - a.score);
  const top = Math.max(0, ...[...files.keys()].map((path) => fileScores.get(path) ?? 0));
  for (const file of files.values()) file.score = top > 0 ? (fileScores.get(file.path) ?? 0) / top : 0;
  return [...files.values()].sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
}
