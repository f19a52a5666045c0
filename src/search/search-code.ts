import type { PrismaClient } from '../db/prisma';
import { embedderForVersion } from '../llm/embedders/create-embedder';
import type { Embedder } from '../llm/embedders/embedder';
import { fuseRankings } from './fuse-rankings';
import { groupHits, type ChunkHit, type FileHits } from './group-hits';
import { rankByVector, rankByVectorWithOccurrences, chunkContents, type ChunkOccurrence, type RankedOccurrences } from '../db/code-chunks';
import type { SearchScope } from './search-scope';
import { queryTerms } from './text-query';
import { rankFiles, type RankedFile } from './file-ranking';
import { orderByModel, shippedRankerModel } from './file-features';
import { expandQuestion } from './synonyms';
import { isExcludedBy } from '../auth/context-exclusions';
import { lexicalIndexKept, lexicalIndexOf, queryGroups, rankLexically, rankWithinFiles, type LexicalHit } from './lexical-search';
import type { LexicalIndex } from './lexical-index';
import type { Reranking } from '../llm/rerankers/reranker';
import { rerankFiles } from './rerank-files';

/** Which rankings to use: both fused (the default), or one alone (for evaluation). */
export type RetrievalMode = 'hybrid' | 'vector' | 'text';

export type Confidence = 'high' | 'medium' | 'low';

export type SearchCodeOptions = {
  prisma: PrismaClient;
  /** The configured embedder; the question is embedded with the one the snapshot's vectors came from. */
  embedder: Embedder;
  scope: SearchScope & { embedderVersion: string; exclusions?: readonly string[] };
  query: string;
  /** Hits wanted after grouping. Default 10. */
  limit?: number;
  /** Candidates each ranking contributes before fusion. Default 50. */
  candidates?: number;
  /** Snippets per file. Default 3. */
  maxPerFile?: number;
  mode?: RetrievalMode;
  /** The reranker of the best files (RERANK_PROVIDER, rerank-files.ts). Default none: the search's own order. */
  reranking?: Reranking | null;
  /** Work out every file feature (file-features.ts) even when no learned model reads them: for training. Default false. */
  allFeatures?: boolean;
  /** Filled with how long each ranking took, for benchmarks; searchCode's result does not depend on it. */
  timings?: SearchTimings;
};

/** Wall time of each ranking of one searchCode, ms (they run at the same time). */
export type SearchTimings = {
  /** Embedding the question and the vector statement (with its occurrences). */
  vectorMs?: number;
  /** The snapshot's keyword index (built when it was not kept) and the BM25 ranking. */
  keywordMs?: number;
  /** Whether this search built the snapshot's keyword index (or waited for another's build). */
  keywordIndexBuilt?: boolean;
};

export type SearchCodeResult = {
  files: FileHits[];
  confidence: Confidence;
  /** The rankings that ran: 'text' alone when no embedder for the stored vectors is configured. */
  used: RetrievalMode;
  /** True when a reranker's order was fused in; false without one, or when it failed (the search's own order). */
  reranked: boolean;
};

/** Nearest chunks by cosine distance (the query is in src/db/code-chunks.ts). */
export const vectorRanking = rankByVector;

/** rankByVector with occurrences, as searchCode runs it. */
export const vectorRankingWithOccurrences = rankByVectorWithOccurrences;

function confidenceOf(top: { ranks: Array<number | null> } | undefined, lists: number): Confidence {
  if (!top) return 'low';
  const present = top.ranks.filter((rank): rank is number => rank !== null);
  if (lists > 1 && present.length === lists && present.every((rank) => rank <= 3)) return 'high';
  if (present.length === lists || present.some((rank) => rank === 1)) return 'medium';
  return 'low';
}

/**
 * RRF's k for fusing the two rankings. Lower than the classic 60 (Cormack et al. fused lists 1,000
 * deep): ours are `candidates` deep and the answer is their first few files, so a chunk at the top
 * of one list should outrank one that both lists hold halfway down.
 */
const FUSION_K = 5;

/** Files of the best file-level BM25 scores that are candidates for the answer beside the fused chunks' files. */
const LEXICAL_FILES = 30;

/** Fused chunks looked up and ranked by file (file-ranking.ts), at least. */
const CHUNKS_FOR_FILES = 60;

/**
 * Hybrid retrieval over one snapshot: the question embedded and searched by vector, the same
 * question ranked by BM25 over the snapshot's keyword index, the two rankings fused (RRF), then hits grouped by file with
 * overlapping ranges merged and an overall confidence; with a reranker, its order of the best
 * files fused in (rerank-files.ts).
 */
export async function searchCode(options: SearchCodeOptions): Promise<SearchCodeResult> {
  const limit = options.limit ?? 10;
  const { found, ranked, keywordIndex, confidence, used } = await searchCandidates(options);
  const within = keywordIndex
    ? await chunksWithinFiles({
        prisma: options.prisma,
        scope: options.scope,
        index: keywordIndex,
        query: options.query,
        ranked,
        found,
        limit,
      })
    : [];
  const grouped = groupHits([...found, ...within], {
    question: options.query,
    maxPerFile: options.maxPerFile,
    fileScores: new Map(ranked.map((file) => [file.path, file.score])),
  });
  const { files, reranked } = options.reranking
    ? await rerankFiles(grouped, { question: options.query, reranking: options.reranking, projectId: options.scope.projectId })
    : { files: grouped, reranked: false };
  let remaining = limit;
  const limited: FileHits[] = [];
  for (const file of files) {
    if (remaining <= 0) break;
    const snippets = file.snippets.slice(0, remaining);
    remaining -= snippets.length;
    limited.push({ ...file, snippets });
  }
  return { files: limited, confidence, used, reranked };
}

/** Every candidate of a search: its chunks, and its files ranked with what each score was made of. */
export type SearchCandidates = {
  found: Array<ChunkHit & { role: string | null }>;
  ranked: RankedFile[];
  /** Files in the snapshot's keyword index (0 when keyword ranking did not run). */
  snapshotFiles: number;
  /** The snapshot's keyword index, when keyword ranking ran. */
  keywordIndex: LexicalIndex | null;
  confidence: Confidence;
  used: RetrievalMode;
};

/**
 * The candidates of hybrid retrieval over one snapshot: the question embedded and searched by
 * vector, the same question ranked by BM25 over the snapshot's keyword index, the two rankings
 * fused (RRF), the best files by their own BM25 added, and the candidates' files ranked
 * (file-ranking.ts, then the learned ranking when one is shipped: file-features.ts).
 */
export async function searchCandidates(options: SearchCodeOptions): Promise<SearchCandidates> {
  const { prisma, scope } = options;
  const candidateCount = options.candidates ?? 50;
  const limit = options.limit ?? 10;
  const embedder = embedderForVersion(options.embedder, scope.embedderVersion);
  const mode: RetrievalMode = embedder ? (options.mode ?? 'hybrid') : 'text';
  const wantVector = mode !== 'text';
  const wantText = mode !== 'vector';
  const terms = queryTerms(options.query);
  // The lexical embedder's bag of words gets the synonyms keyword ranking matches too; a model reads the question as written.
  const vectorQuestion = embedder?.name === 'lexical' ? expandQuestion(options.query, terms) : options.query;
  const excluded = isExcludedBy(scope.exclusions);
  // The vector statement also reads where its chunks occur; the lexical index knows where its own do.
  const none: RankedOccurrences = { ranking: [], occurrences: [] };
  const timings = options.timings;
  const started = performance.now();
  if (timings && wantText) timings.keywordIndexBuilt = !lexicalIndexKept(scope);
  const [vector, lexicalResult] = await Promise.all([
    wantVector
      ? embedder!
          .embed([vectorQuestion])
          .then(([embedding]) => vectorRankingWithOccurrences(prisma, scope, embedding, candidateCount))
          .finally(() => timings && (timings.vectorMs = performance.now() - started))
      : Promise.resolve(none),
    wantText
      ? lexicalIndexOf(prisma, scope)
          .then((index) => ({
            index,
            ranking: rankLexically(index, {
              question: options.query,
              directory: scope.directory,
              excluded,
              limit: candidateCount,
              files: LEXICAL_FILES,
            }),
          }))
          .finally(() => timings && (timings.keywordMs = performance.now() - started))
      : Promise.resolve(null),
  ]);
  const lexical = lexicalResult?.ranking ?? null;
  const text = lexical ? lexicalOccurrences(lexical.chunks) : none;
  // Equal weights: exact BM25 holds its own beside the lexical embedder's vectors (docs/retrieval-eval.md).
  const rankings = [wantVector ? vector.ranking : null, wantText ? text.ranking : null].filter((list): list is string[] => list !== null);
  const fused = fuseRankings(rankings, { k: FUSION_K });
  // Enough chunks for file-level evidence: several chunks of one file, tests next to what they test.
  const chosen = fused.slice(0, Math.max(limit * 3, CHUNKS_FOR_FILES));
  const scoreOf = new Map(chosen.map((hit) => [hit.chunkId, hit.score]));
  const occurrences = occurrencesOf(scoreOf, [vector.occurrences, text.occurrences]).filter((row) => !excluded(row.path));
  // The best files by their own BM25 score are candidates too, with their best chunk, when no chosen chunk is theirs.
  const lexicalFiles = lexical?.files ?? [];
  const withChunks = new Set(occurrences.map((row) => row.path));
  const candidates = [
    ...occurrences,
    ...lexicalOccurrences(lexicalFiles.filter((file) => !withChunks.has(file.path)).map((file) => file.best)).occurrences,
  ];
  const contents = await chunkContents(prisma, {
    projectId: scope.projectId,
    ids: [...new Set(candidates.filter((row) => row.content === null).map((row) => row.chunkId))],
  });
  const vectorRanks = rankPositions(wantVector ? vector.ranking : []);
  const textRanks = rankPositions(text.ranking);
  const found = candidates
    .map((row): ChunkHit & { role: string | null; vectorRank: number | null; textRank: number | null } => ({
      ...row,
      content: row.content ?? contents.get(row.chunkId) ?? '',
      score: scoreOf.get(row.chunkId) ?? 0,
      vectorRank: vectorRanks.get(row.chunkId) ?? null,
      textRank: textRanks.get(row.chunkId) ?? null,
    }))
    .sort((a, b) => b.score - a.score || a.path.localeCompare(b.path) || a.startLine - b.startLine);
  const snapshotFiles = lexicalResult?.index.files.length ?? 0;
  const ranked = orderByModel(
    rankFiles(found, {
      question: options.query,
      terms,
      lexical: new Map(lexicalFiles.map((file) => [file.path, file.score])),
      // Only a learned model reads coverage; the hand formula does not.
      coverage:
        lexicalResult && (options.allFeatures || shippedRankerModel())
          ? (paths) => coverageOf(lexicalResult.index, options.query, paths)
          : undefined,
    }),
    { snapshotFiles },
  );
  return {
    found,
    ranked,
    snapshotFiles,
    keywordIndex: lexicalResult?.index ?? null,
    confidence: confidenceOf(fused[0], rankings.length),
    used: mode,
  };
}

/** Each file's coverage of the question's words in the snapshot's keyword index. */
function coverageOf(index: LexicalIndex, question: string, paths: readonly string[]): Map<string, number> {
  const known = paths.flatMap((path) => {
    const id = index.fileId(path);
    return id === undefined ? [] : [{ path, id }];
  });
  const shares = index.fileCoverage(
    queryGroups(question),
    known.map((file) => file.id),
  );
  return new Map(known.map((file, at) => [file.path, shares[at]]));
}

/** Each id's 1-based position in a ranking (its first). */
function rankPositions(ranking: readonly string[]): Map<string, number> {
  const positions = new Map<string, number>();
  ranking.forEach((id, index) => {
    if (!positions.has(id)) positions.set(id, index + 1);
  });
  return positions;
}

/** An occurrence whose content may still have to be read (the lexical index holds none). */
type LooseOccurrence = Omit<ChunkOccurrence, 'content'> & { content: string | null };

/** The lexical ranking as chunk ids, best first, each once, with where its best documents are. */
function lexicalOccurrences(hits: readonly LexicalHit[]): { ranking: string[]; occurrences: LooseOccurrence[] } {
  const ranking: string[] = [];
  const seen = new Set<string>();
  const occurrences: LooseOccurrence[] = [];
  for (const hit of hits) {
    if (!seen.has(hit.chunkId)) {
      seen.add(hit.chunkId);
      ranking.push(hit.chunkId);
    }
    occurrences.push({
      chunkId: hit.chunkId,
      path: hit.path,
      blob: hit.blob,
      role: hit.role,
      startLine: hit.startLine,
      endLine: hit.endLine,
      symbol: hit.symbol,
      language: hit.language,
      content: null,
    });
  }
  return { ranking, occurrences };
}

/**
 * The occurrences of the chosen chunks (each chunk's rows once, whichever ranking read them), in
 * path and line order as PostgreSQL sorts them (paths are C-collated: code point order).
 */
function occurrencesOf(chosen: ReadonlyMap<string, unknown>, lists: ReadonlyArray<readonly LooseOccurrence[]>): LooseOccurrence[] {
  const rows: LooseOccurrence[] = [];
  const taken = new Set<string>();
  for (const occurrences of lists) {
    const fromThisList = new Set<string>();
    for (const row of occurrences) {
      if (!chosen.has(row.chunkId) || (taken.has(row.chunkId) && !fromThisList.has(row.chunkId))) continue;
      taken.add(row.chunkId);
      fromThisList.add(row.chunkId);
      rows.push(row);
    }
  }
  return rows.sort((a, b) => compareCodePoints(a.path, b.path) || a.startLine - b.startLine);
}

/** Strings in code point order (PostgreSQL's C collation of UTF-8), where JavaScript's < compares UTF-16 code units. */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index += 1) {
    const x = a.charCodeAt(index);
    const y = b.charCodeAt(index);
    if (x !== y) return codePointOrder(x) - codePointOrder(y);
  }
  return a.length - b.length;
}

// Surrogates (characters above U+FFFF) sort after U+E000–U+FFFF in code point order, before them as code units.
const codePointOrder = (unit: number) => (unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2000 : unit >= 0xe000 ? unit - 0x800 : unit);

/** Chunks of a shown file that keyword search ranks best within it, looked at when its snippets are chosen. */
const WITHIN_FILE_CHUNKS = 3;

/**
 * The chunks of the files that will be shown that rank best by keywords within their file, when
 * the candidates do not already hold them: the candidates are the best chunks of the whole
 * snapshot, so in a long file the lines that answer may be none of them (its other chunks ranked
 * higher elsewhere). Their retrieval score is below every candidate's, in keyword order.
 */
async function chunksWithinFiles(options: {
  prisma: PrismaClient;
  scope: SearchCodeOptions['scope'];
  index: LexicalIndex;
  query: string;
  ranked: ReadonlyArray<{ path: string }>;
  found: readonly ChunkHit[];
  limit: number;
}): Promise<ChunkHit[]> {
  const paths = options.ranked.slice(0, options.limit).map((file) => file.path);
  const held = new Set(options.found.map((hit) => `${hit.path}\0${hit.startLine}`));
  const extra = rankWithinFiles(options.index, { question: options.query, paths, perFile: WITHIN_FILE_CHUNKS }).filter(
    (hit) => !held.has(`${hit.path}\0${hit.startLine}`),
  );
  if (!extra.length) return [];
  const contents = await chunkContents(options.prisma, {
    projectId: options.scope.projectId,
    ids: [...new Set(extra.map((hit) => hit.chunkId))],
  });
  const floor = Math.min(...options.found.map((hit) => hit.score));
  return extra.map((hit, index) => ({
    path: hit.path,
    blob: hit.blob,
    startLine: hit.startLine,
    endLine: hit.endLine,
    content: contents.get(hit.chunkId) ?? '',
    score: (floor * (FUSION_K + 1)) / (FUSION_K + 1 + index + 1),
    language: hit.language,
    symbol: hit.symbol,
  }));
}
