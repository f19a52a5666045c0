/** One ranked list of chunk ids, best first. */
export type Ranking = readonly string[];

export type FusedHit = {
  chunkId: string;
  /** Reciprocal rank fusion score scaled so that first in every list is 1. */
  score: number;
  /** 1-based rank in each list, null when absent. */
  ranks: Array<number | null>;
};

export type FuseOptions = {
  /** RRF's k: how much lower ranks still count. Default 60, as in Cormack et al. */
  k?: number;
  /** A weight per list. Default 1 each. */
  weights?: readonly number[];
};

/** Reciprocal rank fusion: sum over lists of weight / (k + rank). Ties keep the first list's order. */
export function fuseRankings(rankings: readonly Ranking[], options: FuseOptions = {}): FusedHit[] {
  const k = options.k ?? 60;
  const weights = rankings.map((_, index) => options.weights?.[index] ?? 1);
  const best = weights.reduce((sum, weight) => sum + weight / (k + 1), 0);
  const hits = new Map<string, FusedHit & { order: number }>();
  let order = 0;
  rankings.forEach((ranking, list) => {
    ranking.forEach((chunkId, index) => {
      let hit = hits.get(chunkId);
      if (!hit) {
        hit = { chunkId, score: 0, ranks: rankings.map(() => null), order: order++ };
        hits.set(chunkId, hit);
      }
      hit.ranks[list] = index + 1;
      hit.score += weights[list] / (k + index + 1);
    });
  });
  return [...hits.values()]
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .map(({ order: _order, ...hit }) => ({ ...hit, score: best > 0 ? hit.score / best : 0 }));
}
