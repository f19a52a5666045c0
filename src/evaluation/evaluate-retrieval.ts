import ignore from 'ignore';
import { badInput } from '../errors';

/**
 * Scoring for the code retrieval evaluation (npm run eval:retrieval): labelled questions, the rank
 * of the first right file in a search's answer, and recall@k and MRR over a set of questions.
 * Pure: the CLI does the indexing and searching.
 */

/** A question a developer might ask, and the files (relative to the repository root) that answer it. */
export type RetrievalQuestion = { q: string; files: string[] };

/** The cut-offs reported, and how deep MRR looks. */
export const RANK_CUTOFFS = [1, 5, 10] as const;
export const MRR_DEPTH = 10;

const MAX_QUESTION_CHARS = 2_000;
const MAX_FILES = 20;

function requireRelativePath(value: unknown, where: string): string {
  if (typeof value !== 'string' || !value.trim()) throw badInput(`${where}: "files" must hold non-empty path strings`);
  const file = value.trim().replace(/^(\.\/)+/, '');
  if (file.startsWith('/') || file.includes('\\') || file.split('/').some((part) => part === '..' || part === '')) {
    throw badInput(`${where}: "${value.slice(0, 200)}" is not a path relative to the repository root`);
  }
  return file;
}

/**
 * Reads questions from JSON Lines: one `{"q": "...", "files": ["lib/a.js", ...]}` per line, blank
 * lines ignored, other keys allowed. Throws BAD_USER_INPUT naming the source and line number of the
 * first bad line, or when there is no question at all.
 */
export function parseQuestions(text: string, source = 'questions'): RetrievalQuestion[] {
  const questions: RetrievalQuestion[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((line, index) => {
    if (!line.trim()) return;
    const where = `${source} line ${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw badInput(`${where}: not valid JSON (${(error as Error).message})`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw badInput(`${where}: expected an object like {"q": "...", "files": ["..."]}`);
    const { q, files } = value as { q?: unknown; files?: unknown };
    if (typeof q !== 'string' || !q.trim()) throw badInput(`${where}: "q" must be a non-empty string`);
    if (q.length > MAX_QUESTION_CHARS) throw badInput(`${where}: "q" is longer than ${MAX_QUESTION_CHARS} characters`);
    if (!Array.isArray(files) || files.length === 0) throw badInput(`${where}: "files" must be a non-empty array of paths`);
    if (files.length > MAX_FILES) throw badInput(`${where}: "files" lists more than ${MAX_FILES} paths`);
    questions.push({ q: q.trim(), files: [...new Set(files.map((file) => requireRelativePath(file, where)))] });
  });
  if (!questions.length) throw badInput(`${source} holds no questions`);
  return questions;
}

/**
 * The 1-based rank of the first retrieved file that is one of the expected files, or null when
 * none is. `retrieved` is a search's answer grouped by file, best first.
 */
export function firstHitRank(retrieved: readonly string[], expected: readonly string[]): number | null {
  const wanted = new Set(expected);
  const index = retrieved.findIndex((file) => wanted.has(file));
  return index === -1 ? null : index + 1;
}

/**
 * The files of an answer that are scored, first `depth` of them: files matching a neutral pattern
 * (gitignore syntax, e.g. `*.md`) are dropped first, so they count neither as a hit nor as a miss.
 * For documentation that answers questions too but is never listed as an answer.
 */
export function scoredFiles(files: readonly string[], options: { neutral?: readonly string[]; depth?: number } = {}): string[] {
  const neutral = options.neutral?.length ? ignore().add([...options.neutral]) : null;
  return files.filter((file) => !neutral?.ignores(file)).slice(0, options.depth ?? MRR_DEPTH);
}

/** Recall at 1, 5 and 10 (the share of questions with a right file that high) and MRR over the first 10 files. */
export type RetrievalMetrics = {
  questions: number;
  recallAt1: number;
  recallAt5: number;
  recallAt10: number;
  mrr: number;
};

/** Scores the first-hit ranks of a set of questions (null: no right file retrieved). Zero questions score 0. */
export function scoreRanks(ranks: ReadonlyArray<number | null>): RetrievalMetrics {
  const count = ranks.length;
  const share = (hits: number) => (count === 0 ? 0 : hits / count);
  const within = (cutoff: number) => share(ranks.filter((rank) => rank !== null && rank <= cutoff).length);
  const reciprocal = ranks.reduce<number>((sum, rank) => sum + (rank !== null && rank <= MRR_DEPTH ? 1 / rank : 0), 0);
  return { questions: count, recallAt1: within(1), recallAt5: within(5), recallAt10: within(10), mrr: share(reciprocal) };
}

/** A row of the results table: a set (when there are several), a strategy, a mode, and the search times when measured. */
export type MetricsRow = {
  set?: string;
  strategy: string;
  mode: string;
  metrics: RetrievalMetrics;
  latency?: { p50: number; p95: number };
};

/** The p-th percentile (nearest rank) of values, 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Lays out rows of cells as a plain-text table: a header, a rule, columns padded (numbers to the right). */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  // A column of numbers (with an optional unit: "1.2 s", "3.40 MB") or dashes reads best aligned right.
  const isNumber = (cell: string) => cell === '-' || /^-?\d[\d,]*(\.\d+)?( \S+)?$/.test(cell);
  const numeric = header.map((_, column) => rows.length > 0 && rows.every((row) => isNumber(row[column] ?? '')));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

const fixed = (value: number) => value.toFixed(3);

/** The (set ×) strategy × mode table: R@1, R@5, R@10 and MRR to three places, and search time p50 and p95 when measured. */
export function formatMetricsTable(rows: readonly MetricsRow[]): string {
  const withTime = rows.some((row) => row.latency !== undefined);
  const withSet = rows.some((row) => row.set !== undefined);
  const header = [...(withSet ? ['set'] : []), 'strategy', 'mode', 'R@1', 'R@5', 'R@10', 'MRR', ...(withTime ? ['p50 ms', 'p95 ms'] : [])];
  return formatTable(
    header,
    rows.map((row) => [
      ...(withSet ? [row.set ?? '-'] : []),
      row.strategy,
      row.mode,
      fixed(row.metrics.recallAt1),
      fixed(row.metrics.recallAt5),
      fixed(row.metrics.recallAt10),
      fixed(row.metrics.mrr),
      ...(withTime ? (row.latency ? [row.latency.p50.toFixed(1), row.latency.p95.toFixed(1)] : ['-', '-']) : []),
    ]),
  );
}
