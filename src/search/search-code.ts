import { toSql } from 'pgvector';
import type { PrismaClient } from '../db/prisma';
import { embedderForVersion } from '../llm/embedders/create-embedder';
import type { Embedder } from '../llm/embedders/embedder';
import { fuseRankings } from './fuse-rankings';
import { groupHits, type ChunkHit, type FileHits } from './group-hits';
import { directoryCondition, type SearchScope } from './search-scope';
import { queryTerms, toAllTsQuery, toPairsTsQuery, toTsQuery } from './text-query';
import { rankFiles } from './file-ranking';
import { expandQuestion } from './synonyms';
import ignore from 'ignore';

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
};

export type SearchCodeResult = {
  files: FileHits[];
  confidence: Confidence;
  /** The rankings that ran: 'text' alone when no embedder for the stored vectors is configured. */
  used: RetrievalMode;
};

type Ranked = { chunkId: string };

/**
 * For EXPLAIN in tests and benchmarks: show the plan, optionally with sequential scans and sorts
 * priced out, which shows whether an index can serve the query at all (a small table is cheaper
 * to scan and sort, so the planner would not show it).
 */
export type PlanOptions = { explain?: boolean; preferIndexes?: boolean };

async function applyPlanOptions(tx: { $executeRawUnsafe(query: string): Promise<number> }, options: PlanOptions): Promise<void> {
  if (!options.preferIndexes) return;
  await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
  await tx.$executeRawUnsafe('SET LOCAL enable_sort = off');
}

// Chunks of the snapshot (and directory) in which a chunk occurs: the filter runs inside the query.
function inScope(scope: SearchScope, firstParameter: number) {
  const directory = directoryCondition(scope.directory, firstParameter);
  return {
    sql: `EXISTS (SELECT 1 FROM code_blob_chunks b JOIN code_index_files f ON f.project_id = b.project_id AND f.blob = b.blob AND f.variant
    = b.variant
                   WHERE b.project_id = c.project_id AND b.chunk_id = c.id AND f.snapshot_id = $2::bigint AND ${directory.sql})`,
    parameters: directory.parameters,
  };
}

/**
 * Nearest chunks by cosine distance through the HNSW index of the vector size, with pgvector's
 * iterative scan so the project, snapshot and directory filter never leaves the list short.
 */
export async function vectorRanking(
  prisma: PrismaClient,
  scope: SearchScope,
  vector: number[],
  limit: number,
  options: PlanOptions = {},
): Promise<Ranked[]> {
  const dims = vector.length;
  const filter = inScope(scope, 5);
  return prisma.$transaction(async (tx) => {
    await applyPlanOptions(tx, options);
    await tx.$executeRawUnsafe("SET LOCAL hnsw.iterative_scan = 'relaxed_order'");
    await tx.$executeRawUnsafe(`SET LOCAL hnsw.ef_search = ${Math.max(40, Math.min(1000, limit * 2))}`);
    // relaxed_order may return neighbours slightly out of order: the outer query sorts them exactly.
    return tx.$queryRawUnsafe<Ranked[]>(
      `${options.explain ? 'EXPLAIN ' : ''}WITH nearest AS MATERIALIZED (
         SELECT c.id AS "chunkId", c.embedding::vector(${dims}) <=> $3::vector(${dims}) AS distance
           FROM code_chunks c
          WHERE c.project_id = $1 AND c.dims = ${dims} AND ${filter.sql}
          ORDER BY c.embedding::vector(${dims}) <=> $3::vector(${dims})
          LIMIT $4
       ) SELECT "chunkId" FROM nearest ORDER BY distance`,
      scope.projectId,
      scope.snapshotId,
      toSql(vector),
      limit,
      ...filter.parameters,
    );
  });
}

/** Matches of a broad text level (pairs of words, any word) ranked this deep at most; see textRanking. */
const TEXT_RANK_CAP = 500;
/** The same for the level of chunks holding every word: usually few, but bounded too. */
const TEXT_RANK_CAP_ALL = 2_000;

/**
 * Chunks matching the question's words (identifier-split), ranked by PostgreSQL's cover density
 * over all of them, level by level from the most to the least selective query so the cost does not
 * grow with how common a word is: chunks holding every word (three or more), then
 * chunks holding at least two, then chunks with any one; a level is looked at only when the levels
 * before gave too few, and at most TEXT_RANK_CAP (TEXT_RANK_CAP_ALL) of its matches are ranked.
 */
export async function textRanking(
  prisma: PrismaClient,
  scope: SearchScope,
  question: string,
  limit: number,
  options: PlanOptions = {},
): Promise<Ranked[]> {
  const terms = queryTerms(question);
  if (!terms.length) return [];
  const filter = inScope(scope, 5);
  const rankBy = toTsQuery(terms);
  const levels = [
    { query: toAllTsQuery(terms), cap: TEXT_RANK_CAP_ALL },
    { query: toPairsTsQuery(terms), cap: TEXT_RANK_CAP },
    { query: rankBy, cap: TEXT_RANK_CAP },
  ].filter((level): level is { query: string; cap: number } => level.query !== null);
  type Db = Pick<PrismaClient, '$queryRawUnsafe' | '$executeRawUnsafe'>;
  const run = async (tx: Db): Promise<Ranked[]> => {
    const ranked: Ranked[] = [];
    const seen = new Set<string>();
    for (const level of levels) {
      const rows = await tx.$queryRawUnsafe<Ranked[]>(
        `${options.explain ? 'EXPLAIN ' : ''}WITH matched AS MATERIALIZED (
           SELECT c.id, c.search_text FROM code_chunks c, to_tsquery('simple', $3) q
            WHERE c.project_id = $1 AND c.search_text @@ q AND ${filter.sql}
            LIMIT ${level.cap}
         ) SELECT id AS "chunkId" FROM matched
            ORDER BY ts_rank_cd(search_text, to_tsquery('simple', $${5 + filter.parameters.length}), 1) DESC, id
            LIMIT $4`,
        scope.projectId,
        scope.snapshotId,
        level.query,
        limit + seen.size,
        ...filter.parameters,
        rankBy,
      );
      if (options.explain) return rows;
      for (const row of rows) {
        if (seen.has(row.chunkId) || ranked.length >= limit) continue;
        seen.add(row.chunkId);
        ranked.push(row);
      }
      if (ranked.length >= limit) break;
    }
    return ranked;
  };
  // A transaction only to scope the plan settings: searches skip its round trips.
  if (!options.explain && !options.preferIndexes) return run(prisma);
  return prisma.$transaction(async (tx) => {
    await applyPlanOptions(tx, options);
    return run(tx);
  });
}

/** Where the chosen chunks occur in the snapshot's files (a chunk can occur in several). */
async function occurrences(prisma: PrismaClient, scope: SearchScope, chunkIds: string[]) {
  const directory = directoryCondition(scope.directory, 4);
  return prisma.$queryRawUnsafe<
    Array<{
      chunkId: string;
      path: string;
      blob: string;
      role: string | null;
      startLine: number;
      endLine: number;
      symbol: string | null;
      language: string | null;
      content: string;
    }>
  >(
    `SELECT b.chunk_id AS "chunkId", f.path, f.blob, f.role, b.start_line AS "startLine", b.end_line AS "endLine", b.symbol, b.language,
    c.content
       FROM code_blob_chunks b
       JOIN code_index_files f ON f.project_id = b.project_id AND f.blob = b.blob AND f.variant = b.variant
       JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id
      WHERE b.project_id = $1 AND f.snapshot_id = $2::bigint AND b.chunk_id = ANY($3::text[]) AND ${directory.sql}
      ORDER BY f.path, b.start_line`,
    scope.projectId,
    scope.snapshotId,
    chunkIds,
    ...directory.parameters,
  );
}

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

/** Fused chunks looked up and ranked by file (file-ranking.ts), at least. */
const CHUNKS_FOR_FILES = 60;

/**
 * Weights of the vector and full-text rankings in the fusion. Vectors of the lexical embedder are a
 * hashed bag of the same words the full-text index holds, without its stemming and stop words:
 * they add little the text ranking does not know, so the text ranking counts twice
 * and the vectors mostly settle its near-ties. A model's vectors carry meaning of their own: equal.
 */
function fusionWeights(embedder: Embedder | null): { vector: number; text: number } {
  return embedder?.name === 'lexical' ? { vector: 1, text: 2 } : { vector: 1, text: 1 };
}

/**
 * Hybrid retrieval over one snapshot: the question embedded and searched by vector, the same
 * question searched by full text, the two rankings fused (RRF), then hits grouped by file with
 * overlapping ranges merged and an overall confidence.
 */
export async function searchCode(options: SearchCodeOptions): Promise<SearchCodeResult> {
  const { prisma, scope } = options;
  const candidates = options.candidates ?? 50;
  const limit = options.limit ?? 10;
  const embedder = embedderForVersion(options.embedder, scope.embedderVersion);
  const mode: RetrievalMode = embedder ? (options.mode ?? 'hybrid') : 'text';
  const wantVector = mode !== 'text';
  const wantText = mode !== 'vector';
  const terms = queryTerms(options.query);
  // The lexical embedder's bag of words gets the synonyms full text matches too; a model reads the question as written.
  const vectorQuestion = embedder?.name === 'lexical' ? expandQuestion(options.query, terms) : options.query;
  const [vector, text] = await Promise.all([
    wantVector
      ? embedder!.embed([vectorQuestion]).then(([embedding]) => vectorRanking(prisma, scope, embedding, candidates))
      : Promise.resolve([]),
    wantText ? textRanking(prisma, scope, options.query, candidates) : Promise.resolve([]),
  ]);
  const weights = fusionWeights(embedder);
  const lists = [
    wantVector ? { ranking: vector.map((hit) => hit.chunkId), weight: weights.vector } : null,
    wantText ? { ranking: text.map((hit) => hit.chunkId), weight: weights.text } : null,
  ].filter((list): list is { ranking: string[]; weight: number } => list !== null);
  const rankings = lists.map((list) => list.ranking);
  const fused = fuseRankings(rankings, { k: FUSION_K, weights: lists.map((list) => list.weight) });
  // Enough chunks for file-level evidence: several chunks of one file, tests next to what they test.
  const chosen = fused.slice(0, Math.max(limit * 3, CHUNKS_FOR_FILES));
  const scoreOf = new Map(chosen.map((hit) => [hit.chunkId, hit.score]));
  const excluded = scope.exclusions?.length ? ignore().add([...scope.exclusions]) : null;
  const found = (
    await occurrences(
      prisma,
      scope,
      chosen.map((hit) => hit.chunkId),
    )
  )
    .filter((row) => !excluded?.ignores(row.path))
    .map((row): ChunkHit & { role: string | null } => ({ ...row, score: scoreOf.get(row.chunkId) ?? 0 }))
    .sort((a, b) => b.score - a.score || a.path.localeCompare(b.path) || a.startLine - b.startLine);
  const ranked = rankFiles(found, { question: options.query, terms });
  const files = groupHits(found, { maxPerFile: options.maxPerFile, fileScores: new Map(ranked.map((file) => [file.path, file.score])) });
  let remaining = limit;
  const limited: FileHits[] = [];
  for (const file of files) {
    if (remaining <= 0) break;
    const snippets = file.snippets.slice(0, remaining);
    remaining -= snippets.length;
    limited.push({ ...file, snippets });
  }
  return { files: limited, confidence: confidenceOf(fused[0], rankings.length), used: mode };
}
