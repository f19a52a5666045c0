import { snapshotLexicalRows, storedKeywordIndex, storeKeywordIndex } from '../db/code-chunks';
import type { PrismaClient } from '../db/prisma';
import { stemWord } from '../llm/embedders/terms';
import { LruCache } from '../lru-cache';
import { observeKeywordIndexBuild } from '../metrics/record';
import { KEYWORD_INDEX_FORMAT, LexicalIndex, type Bm25Parameters, type LexicalDocument, type QueryGroup } from './lexical-index';
import { synonymsOf } from './synonyms';
import { learnedPartsOf } from './vocabulary';
import { queryTerms } from './text-query';
import { termExpansions, wholeWords } from './query-understanding';

/**
 * Exact keyword ranking of a snapshot's chunks and files: BM25 over the in-memory index of the
 * snapshot (lexical-index.ts), built on first use and kept while it is used (a snapshot never
 * changes). See src/search/README.md.
 */

/** A synonym's occurrences count this much of the word's own (synonyms.ts). */
const SYNONYM_WEIGHT = 0.5;

/** Chunks are short: their length matters less than a file's. */
export const CHUNK_BM25: Bm25Parameters = { k1: 1.2, b: 0.5 };
export const FILE_BM25: Bm25Parameters = { k1: 1.2, b: 0.75 };

/** The lexemes a word matches in a full-text document, as text-query.ts's termForms matches them. */
function formsOf(term: string, weight: number): QueryGroup['forms'] {
  const stem = stemWord(term);
  if (/^\d+$/.test(term)) return [{ lexeme: term, prefix: false, weight }];
  if (stem.length >= 4 && (stem !== term || term.length >= 5)) return [{ lexeme: stem, prefix: true, weight }];
  const forms = stem !== term ? [term, stem] : term.endsWith('s') ? [term] : [term, `${term}s`];
  return forms.map((lexeme) => ({ lexeme, prefix: false, weight }));
}

/**
 * The question's words as BM25 query groups: each word with its stem forms, its other spellings
 * and base form (query-understanding.ts: `pg` for "PostgreSQL", `index` for "indices"), its
 * synonyms' (weighing SYNONYM_WEIGHT) and, when the learned vocabulary is on, the identifier parts
 * learned for it (vocabulary.ts, weighing SYNONYM_WEIGHT × their strength); a name in mixed case
 * ("MySQL") also as one word. A joined identifier (`parse_connection`, which queryTerms adds for
 * `parseConnection`) is left out: the document holds its parts, which are words of the question too.
 */
export function queryGroups(question: string): QueryGroup[] {
  const groups: QueryGroup[] = [];
  const terms = queryTerms(question);
  for (const term of [...terms, ...wholeWords(question).filter((word) => !terms.includes(word))]) {
    if (term.includes('_')) continue;
    const forms = new Map<string, QueryGroup['forms'][number]>();
    for (const form of [
      ...formsOf(term, 1),
      ...termExpansions(term).flatMap((expansion) => formsOf(expansion.word, expansion.weight)),
      ...synonymsOf(term).flatMap((synonym) => formsOf(synonym, SYNONYM_WEIGHT)),
      // A learned part weighs as a synonym scaled by the association's strength.
      ...learnedPartsOf(term).flatMap(({ part, npmi }) => formsOf(part, SYNONYM_WEIGHT * npmi)),
    ]) {
      const key = `${form.lexeme}${form.prefix ? '*' : ''}`;
      if ((forms.get(key)?.weight ?? 0) < form.weight) forms.set(key, form);
    }
    groups.push({ forms: [...forms.values()] });
  }
  return groups;
}

const DEFAULT_CACHE_BYTES = 256 * 1024 * 1024;
let cache = new LruCache<string, LexicalIndex>(DEFAULT_CACHE_BYTES, (_key, index) => index.weight);
const loading = new Map<string, Promise<LexicalIndex>>();

/** Sets how many bytes of snapshot indexes a process keeps (SEARCH_INDEX_CACHE_MB); drops what it holds. */
export function configureLexicalCache(bytes: number): void {
  cache = new LruCache<string, LexicalIndex>(bytes, (_key, index) => index.weight);
}

/** Whether this process keeps the snapshot's keyword index (a search of it would not build one). */
export function lexicalIndexKept(scope: { projectId: number; snapshotId: bigint }): boolean {
  return cache.has(`${scope.projectId}:${scope.snapshotId}`);
}

/** Drops the snapshot's keyword index from this process's cache (a snapshot an index run replaced). */
export function forgetLexicalIndex(scope: { projectId: number; snapshotId: bigint }): boolean {
  return cache.delete(`${scope.projectId}:${scope.snapshotId}`);
}

/**
 * The BM25 index of a snapshot: kept in this process, else loaded from its serialised form in the
 * database (code_snapshot_keyword_indexes), else built from the snapshot's rows and stored there for
 * the next process; once however many searches ask for it at the same time (a search that comes
 * while the warm-up gets it waits for the same load). A snapshot with no rows is neither kept nor
 * stored (it may be one a run is still writing, or one that was just replaced). `trigger` names who
 * asked, for the metrics.
 */
export async function lexicalIndexOf(
  prisma: PrismaClient,
  scope: { projectId: number; snapshotId: bigint },
  trigger: 'search' | 'warm_up' = 'search',
): Promise<LexicalIndex> {
  const key = `${scope.projectId}:${scope.snapshotId}`;
  const kept = cache.get(key);
  if (kept) return kept;
  let pending = loading.get(key);
  if (!pending) {
    const startedAt = Date.now();
    pending = loadOrBuild(prisma, scope)
      .then(({ index, outcome, rows }) => {
        if (rows) cache.set(key, index);
        observeKeywordIndexBuild({ trigger, startedAt, outcome });
        return index;
      })
      .catch((error: unknown) => {
        observeKeywordIndexBuild({ trigger, startedAt, outcome: 'failed' });
        throw error;
      })
      .finally(() => loading.delete(key));
    loading.set(key, pending);
  }
  return pending;
}

async function loadOrBuild(
  prisma: PrismaClient,
  scope: { projectId: number; snapshotId: bigint },
): Promise<{ index: LexicalIndex; outcome: 'built' | 'loaded'; rows: boolean }> {
  const stored = await storedKeywordIndex(prisma, { snapshotId: scope.snapshotId, format: KEYWORD_INDEX_FORMAT });
  if (stored) {
    try {
      return { index: LexicalIndex.deserialize(stored), outcome: 'loaded', rows: true };
    } catch {
      // Unreadable (cut short, or written by a build that disagreed on the format): built and written again below.
    }
  }
  const rows = await snapshotLexicalRows(prisma, scope);
  const index = new LexicalIndex(rows);
  if (rows.length) {
    // Not waited for: the search has its index. A write that fails (the snapshot replaced meanwhile, the
    // database busy) leaves the next process to build it again.
    storeKeywordIndex(prisma, { snapshotId: scope.snapshotId, format: KEYWORD_INDEX_FORMAT, data: index.serialize() }).catch(
      () => undefined,
    );
  }
  return { index, outcome: 'built', rows: rows.length > 0 };
}

export type LexicalHit = LexicalDocument & { path: string; blob: string; role: string | null; score: number };

export type LexicalFile = { path: string; score: number; best: LexicalHit };

export type LexicalRanking = {
  /** The best chunk documents, best first. */
  chunks: LexicalHit[];
  /** The best files by their own BM25 score, best first, each with its best chunk. */
  files: LexicalFile[];
};

/**
 * The best `limit` chunks and every scoring file of the index for a question, within a directory
 * ('' for all) and without the files `excluded` names.
 */
export function rankLexically(
  index: LexicalIndex,
  options: { question: string; directory: string; excluded: (path: string) => boolean; limit: number; files: number },
): LexicalRanking {
  const groups = queryGroups(options.question);
  if (!groups.length) return { chunks: [], files: [] };
  const accepted = Uint8Array.from(index.files, (file) =>
    file.path.startsWith(options.directory) && !options.excluded(file.path) ? 1 : 0,
  );
  const hit = ({ id, score }: { id: number; score: number }): LexicalHit => {
    const document = index.documents[id];
    const file = index.files[document.file];
    return { ...document, path: file.path, blob: file.blob, role: file.role, score };
  };
  const chunks = index.score({ groups, level: 'chunk', parameters: CHUNK_BM25, accepted, limit: options.limit }).map(hit);
  const topFiles = index.score({ groups, level: 'file', parameters: FILE_BM25, accepted, limit: options.files });
  // Each top file's best chunk: the chunk level again, over those files alone.
  const ofTopFiles = new Uint8Array(index.files.length);
  for (const { id } of topFiles) ofTopFiles[id] = 1;
  const bestOfFile = new Map<number, LexicalHit>();
  for (const scored of index.score({
    groups,
    level: 'chunk',
    parameters: CHUNK_BM25,
    accepted: ofTopFiles,
    limit: topFiles.length,
    bestPerFile: true,
  }))
    bestOfFile.set(index.fileOf(scored.id), hit(scored));
  const files = topFiles.flatMap(({ id, score }) => {
    const best = bestOfFile.get(id);
    return best ? [{ path: index.files[id].path, score, best }] : [];
  });
  return { chunks, files };
}

/**
 * The best `perFile` chunks of each of `paths` by chunk BM25, best first: where in a found file the
 * answer may lie when the candidates of the whole snapshot hold none of its chunks (a long file
 * whose other chunks ranked higher elsewhere).
 */
export function rankWithinFiles(
  index: LexicalIndex,
  options: { question: string; paths: readonly string[]; perFile: number },
): LexicalHit[] {
  const groups = queryGroups(options.question);
  if (!groups.length || !options.paths.length) return [];
  const wanted = new Set(options.paths);
  const accepted = Uint8Array.from(index.files, (file) => (wanted.has(file.path) ? 1 : 0));
  const taken = new Map<number, number>();
  const hits: LexicalHit[] = [];
  for (const { id, score } of index.score({ groups, level: 'chunk', parameters: CHUNK_BM25, accepted, limit: Number.MAX_SAFE_INTEGER })) {
    const fileId = index.fileOf(id);
    const count = taken.get(fileId) ?? 0;
    if (count >= options.perFile) continue;
    taken.set(fileId, count + 1);
    const document = index.documents[id];
    const file = index.files[fileId];
    hits.push({ ...document, path: file.path, blob: file.blob, role: file.role, score });
  }
  return hits;
}
