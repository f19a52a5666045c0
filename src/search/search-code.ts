import type { PrismaClient } from '../db/prisma';
import { embedderForVersion } from '../llm/embedders/create-embedder';
import type { Embedder } from '../llm/embedders/embedder';
import { fuseRankings } from './fuse-rankings';
import { groupHits, type ChunkHit, type FileHits } from './group-hits';
import {
  rankByTextLevels,
  rankByTextLevelsWithOccurrences,
  rankByVector,
  rankByVectorWithOccurrences,
  type ChunkOccurrence,
  type PlanOptions,
  type Ranked,
  type RankedOccurrences,
  type TextLevelsRequest,
} from '../db/code-chunks';
import type { SearchScope } from './search-scope';
import { queryTerms, toAllTsQuery, toIdentifiersTsQuery, toPairsTsQuery, toTsQuery } from './text-query';
import { rankFiles } from './file-ranking';
import { expandQuestion } from './synonyms';
import { isExcludedBy } from '../auth/context-exclusions';

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

/** Nearest chunks by cosine distance (the query is in src/db/code-chunks.ts). */
export const vectorRanking = rankByVector;

/** Matches of a broad text level (pairs of words, any word) ranked this deep at most; see textRanking. */
const TEXT_RANK_CAP = 500;
/** The same for the level of chunks holding every word: usually few, but bounded too. */
const TEXT_RANK_CAP_ALL = 2_000;

/**
 * Chunks matching the question's words (identifier-split), ranked by PostgreSQL's cover density
 * over all of them, level by level from the most to the least selective query so the cost does not
 * grow with how common a word is: chunks holding every word (three or more), then chunks naming
 * one of the question's identifiers whole, then chunks holding at least two words, then chunks with
 * any one; a level is looked at only when the levels before gave too few, at most TEXT_RANK_CAP
 * (TEXT_RANK_CAP_ALL) of its matches are looked at, and of those only three times as many as it
 * still needs, the first by term frequency, are ranked by cover density (rankByTextLevels).
 */
export async function textRanking(
  prisma: PrismaClient,
  scope: SearchScope,
  question: string,
  limit: number,
  options: PlanOptions = {},
): Promise<Ranked[]> {
  const request = textLevels(question, limit);
  return request ? rankByTextLevels(prisma, scope, request, options) : [];
}

/** textRanking with where each ranked chunk occurs in the scope, read by the same statement (what searchCode runs). */
export async function textRankingWithOccurrences(
  prisma: PrismaClient,
  scope: SearchScope,
  question: string,
  limit: number,
  options: PlanOptions = {},
): Promise<RankedOccurrences> {
  const request = textLevels(question, limit);
  return request ? rankByTextLevelsWithOccurrences(prisma, scope, request, options) : { ranking: [], occurrences: [] };
}

/** The levels of textRanking for a question; null when it has no words to search for. */
function textLevels(question: string, limit: number): TextLevelsRequest | null {
  const terms = queryTerms(question);
  if (!terms.length) return null;
  // The any-word query is also what every level ranks by.
  const [all, identifiers, pairs, rankBy] = textLevelQueries(terms);
  const levels = [
    { query: all, cap: TEXT_RANK_CAP_ALL },
    { query: identifiers, cap: TEXT_RANK_CAP },
    { query: pairs, cap: TEXT_RANK_CAP },
    { query: rankBy, cap: TEXT_RANK_CAP },
  ].filter((level): level is { query: string; cap: number } => level.query !== null);
  return { levels, rankBy, limit };
}

/**
 * The tsqueries of textRanking's levels for the question's terms, most selective first (null for a
 * level the terms do not make): every word, an identifier whole, two words, any word.
 */
export function textLevelQueries(terms: readonly string[]): [string | null, string | null, string | null, string] {
  return [toAllTsQuery(terms), toIdentifiersTsQuery(terms), toPairsTsQuery(terms), toTsQuery(terms)];
}

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
  // Each ranking's statement also reads where its chunks occur, so no round trip follows the two.
  const none: RankedOccurrences = { ranking: [], occurrences: [] };
  const [vector, text] = await Promise.all([
    wantVector
      ? embedder!.embed([vectorQuestion]).then(([embedding]) => vectorRankingWithOccurrences(prisma, scope, embedding, candidates))
      : Promise.resolve(none),
    wantText ? textRankingWithOccurrences(prisma, scope, options.query, candidates) : Promise.resolve(none),
  ]);
  const weights = fusionWeights(embedder);
  const lists = [
    wantVector ? { ranking: vector.ranking, weight: weights.vector } : null,
    wantText ? { ranking: text.ranking, weight: weights.text } : null,
  ].filter((list): list is { ranking: string[]; weight: number } => list !== null);
  const rankings = lists.map((list) => list.ranking);
  const fused = fuseRankings(rankings, { k: FUSION_K, weights: lists.map((list) => list.weight) });
  // Enough chunks for file-level evidence: several chunks of one file, tests next to what they test.
  const chosen = fused.slice(0, Math.max(limit * 3, CHUNKS_FOR_FILES));
  const scoreOf = new Map(chosen.map((hit) => [hit.chunkId, hit.score]));
  const excluded = isExcludedBy(scope.exclusions);
  const found = occurrencesOf(scoreOf, [vector.occurrences, text.occurrences])
    .filter((row) => !excluded(row.path))
    .map((row): ChunkHit & { role: string | null } => ({ ...row, score: scoreOf.get(row.chunkId) ?? 0 }))
    .sort((a, b) => b.score - a.score || a.path.localeCompare(b.path) || a.startLine - b.startLine);
  const ranked = rankFiles(found, { question: options.query, terms });
  const files = groupHits(found, {
    question: options.query,
    maxPerFile: options.maxPerFile,
    fileScores: new Map(ranked.map((file) => [file.path, file.score])),
  });
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

/**
 * The occurrences of the chosen chunks (each chunk's rows once, whichever ranking read them), in
 * path and line order as PostgreSQL sorts them (paths are C-collated: code point order).
 */
function occurrencesOf(chosen: ReadonlyMap<string, unknown>, lists: ReadonlyArray<readonly ChunkOccurrence[]>): ChunkOccurrence[] {
  const rows: ChunkOccurrence[] = [];
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
