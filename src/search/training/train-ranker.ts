import { FEATURE_NAMES, scoreFeatures, treeValue, type RankerModel, type RankerTree } from '../file-features';
import type { RankerExample } from './ranker-features';

/**
 * Trains the linear file ranker (file-features.ts) on examples: listwise softmax cross-entropy
 * (the model's softmax over a question's candidates should put its mass on the files that answer)
 * with L2 towards the hand-weighted score (the prior: the model starts as the hand formula and moves
 * away from it only as far as the data pays for), full-batch Adam. Every question weighs the same;
 * a question none of whose answers is a candidate teaches nothing and is left out.
 */
export type TrainOptions = {
  /** L2 strength. Default 0.001. */
  l2?: number;
  /** Full-batch steps. Default 400. */
  steps?: number;
  /** Adam's learning rate. Default 0.05. */
  rate?: number;
  /** Weight per source (sum of its questions' weights); by default each question weighs 1. */
  perSourceCap?: number;
};

export function trainRanker(examples: readonly RankerExample[], options: TrainOptions = {}): RankerModel {
  const l2 = options.l2 ?? 0.001;
  const steps = options.steps ?? 400;
  const rate = options.rate ?? 0.05;
  const usable = examples.filter((example) => example.candidates.some((candidate) => candidate.relevant) && example.candidates.length > 1);
  // Each source weighs at most perSourceCap questions' worth, so a large package does not dominate.
  const counts = new Map<string, number>();
  for (const example of usable) counts.set(example.source, (counts.get(example.source) ?? 0) + 1);
  const weightOf = (example: RankerExample) => (options.perSourceCap ? Math.min(1, options.perSourceCap / counts.get(example.source)!) : 1);
  const total = usable.reduce((sum, example) => sum + weightOf(example), 0);
  const dimensions = FEATURE_NAMES.length;
  const prior = new Array<number>(dimensions).fill(0);
  prior[FEATURE_NAMES.indexOf('hand')] = 1;
  const weights = [...prior];
  const first = new Array<number>(dimensions).fill(0);
  const second = new Array<number>(dimensions).fill(0);
  const beta1 = 0.9;
  const beta2 = 0.999;
  for (let step = 1; step <= steps; step += 1) {
    const gradient = weights.map((weight, dimension) => 2 * l2 * (weight - prior[dimension]));
    for (const example of usable) {
      const weight = weightOf(example) / total;
      const scores = example.candidates.map((candidate) => 10 * scoreFeatures({ features: FEATURE_NAMES, weights }, candidate.features));
      const top = Math.max(...scores);
      const exps = scores.map((score) => Math.exp(score - top));
      const sum = exps.reduce((a, b) => a + b, 0);
      const relevant = example.candidates.filter((candidate) => candidate.relevant).length;
      example.candidates.forEach((candidate, index) => {
        const coefficient = 10 * weight * (exps[index] / sum - (candidate.relevant ? 1 / relevant : 0));
        for (let dimension = 0; dimension < dimensions; dimension += 1) gradient[dimension] += coefficient * candidate.features[dimension];
      });
    }
    for (let dimension = 0; dimension < dimensions; dimension += 1) {
      first[dimension] = beta1 * first[dimension] + (1 - beta1) * gradient[dimension];
      second[dimension] = beta2 * second[dimension] + (1 - beta2) * gradient[dimension] ** 2;
      const corrected = first[dimension] / (1 - beta1 ** step);
      const scale = Math.sqrt(second[dimension] / (1 - beta2 ** step)) + 1e-8;
      weights[dimension] -= (rate * corrected) / scale;
    }
  }
  return { features: FEATURE_NAMES, weights: weights.map((weight) => Math.round(weight * 1e5) / 1e5) };
}

/** Recall@1/5 and MRR@10 of an ordering of each example's candidates (the first relevant file's rank). */
export function rankingQuality(
  examples: readonly RankerExample[],
  order: (example: RankerExample) => number[],
): { questions: number; recallAt1: number; recallAt5: number; mrr: number; candidateRecall: number } {
  let at1 = 0;
  let at5 = 0;
  let reciprocal = 0;
  let covered = 0;
  for (const example of examples) {
    const scores = order(example);
    const indexes = example.candidates.map((_, index) => index).sort((a, b) => scores[b] - scores[a] || a - b);
    const rank = indexes.findIndex((index) => example.candidates[index].relevant) + 1;
    if (example.candidates.some((candidate) => candidate.relevant)) covered += 1;
    if (rank === 0) continue;
    if (rank <= 1) at1 += 1;
    if (rank <= 5) at5 += 1;
    if (rank <= 10) reciprocal += 1 / rank;
  }
  const count = Math.max(1, examples.length);
  return {
    questions: examples.length,
    recallAt1: at1 / count,
    recallAt5: at5 / count,
    mrr: reciprocal / count,
    candidateRecall: covered / count,
  };
}

/** Scores by a model, for rankingQuality. */
export const byModel = (model: RankerModel) => (example: RankerExample) =>
  example.candidates.map((candidate) => scoreFeatures(model, candidate.features));

/** Scores by the hand-weighted formula, for rankingQuality. */
export const byHand = (example: RankerExample) => example.candidates.map((candidate) => candidate.features[FEATURE_NAMES.indexOf('hand')]);

export type BoostOptions = {
  /** Trees added. Default 60. */
  trees?: number;
  /** Levels of splits per tree. Default 3. */
  depth?: number;
  /** Shrinkage of each tree. Default 0.1. */
  rate?: number;
  /** L2 on leaf values (Newton step's λ). Default 1. */
  lambda?: number;
  /** Candidate rows a leaf needs at least. Default 50. */
  minRows?: number;
  /** Thresholds tried per feature (quantiles of its values). Default 32. */
  bins?: number;
};

/**
 * Gradient-boosted regression trees on top of a linear model, for the same listwise softmax loss:
 * each tree fits the loss's gradient over every candidate of every question, its leaves take a
 * Newton step. Trees split on quantile thresholds of each feature.
 */
export function boostRanker(examples: readonly RankerExample[], base: RankerModel, options: BoostOptions = {}): RankerModel {
  const treeCount = options.trees ?? 60;
  const depth = options.depth ?? 3;
  const rate = options.rate ?? 0.1;
  const lambda = options.lambda ?? 1;
  const minRows = options.minRows ?? 50;
  const binCount = options.bins ?? 32;
  const usable = examples.filter((example) => example.candidates.some((candidate) => candidate.relevant) && example.candidates.length > 1);
  const rows = usable.flatMap((example) => example.candidates.map((candidate) => candidate.features));
  const dimensions = FEATURE_NAMES.length;
  const thresholds = Array.from({ length: dimensions }, (_, dimension) => {
    const values = [...new Set(rows.map((row) => row[dimension]))].sort((a, b) => a - b);
    const picked = new Set<number>();
    for (let bin = 1; bin < binCount; bin += 1)
      picked.add(values[Math.floor((bin * values.length) / binCount)] ?? values[values.length - 1]);
    return [...picked].filter((value) => value < values[values.length - 1]);
  });
  const scores = rows.map((row) => scoreFeatures(base, row));
  const trees: RankerTree[] = [];
  const gradient = new Float64Array(rows.length);
  const hessian = new Float64Array(rows.length);
  for (let round = 0; round < treeCount; round += 1) {
    let offset = 0;
    for (const example of usable) {
      const count = example.candidates.length;
      const top = Math.max(...scores.slice(offset, offset + count));
      let sum = 0;
      for (let index = 0; index < count; index += 1) sum += Math.exp(scores[offset + index] - top);
      const relevant = example.candidates.filter((candidate) => candidate.relevant).length;
      example.candidates.forEach((candidate, index) => {
        const probability = Math.exp(scores[offset + index] - top) / sum;
        gradient[offset + index] = (probability - (candidate.relevant ? 1 / relevant : 0)) / usable.length;
        hessian[offset + index] = Math.max(probability * (1 - probability), 1e-6) / usable.length;
      });
      offset += count;
    }
    const tree = growTree({ rows, gradient, hessian, thresholds, depth, lambda, minRows, rate });
    trees.push(tree);
    rows.forEach((row, index) => (scores[index] += treeValue(tree, row)));
  }
  return { ...base, trees: [...(base.trees ?? []), ...trees] };
}

function growTree(options: {
  rows: number[][];
  gradient: Float64Array;
  hessian: Float64Array;
  thresholds: number[][];
  depth: number;
  lambda: number;
  minRows: number;
  rate: number;
}): RankerTree {
  const { rows, gradient, hessian, thresholds, lambda, minRows } = options;
  const tree: RankerTree = { feature: [], threshold: [], left: [], right: [], value: [] };
  const leafValue = (members: number[]) => {
    let g = 0;
    let h = 0;
    for (const index of members) {
      g += gradient[index];
      h += hessian[index];
    }
    return (-g / (h + lambda / rows.length)) * options.rate;
  };
  const grow = (members: number[], level: number): number => {
    const node = tree.feature.length;
    tree.feature.push(-1);
    tree.threshold.push(0);
    tree.left.push(0);
    tree.right.push(0);
    tree.value.push(0);
    let best: { feature: number; threshold: number; gain: number } | null = null;
    if (level < options.depth && members.length >= 2 * minRows) {
      let totalG = 0;
      let totalH = 0;
      for (const index of members) {
        totalG += gradient[index];
        totalH += hessian[index];
      }
      const regular = lambda / rows.length;
      const parent = (totalG * totalG) / (totalH + regular);
      for (let feature = 0; feature < thresholds.length; feature += 1) {
        const cuts = thresholds[feature];
        if (!cuts.length) continue;
        const g = new Float64Array(cuts.length + 1);
        const h = new Float64Array(cuts.length + 1);
        const n = new Int32Array(cuts.length + 1);
        for (const index of members) {
          const value = rows[index][feature];
          let low = 0;
          let high = cuts.length;
          while (low < high) {
            const middle = (low + high) >> 1;
            if (value <= cuts[middle]) high = middle;
            else low = middle + 1;
          }
          g[low] += gradient[index];
          h[low] += hessian[index];
          n[low] += 1;
        }
        let leftG = 0;
        let leftH = 0;
        let leftN = 0;
        for (let cut = 0; cut < cuts.length; cut += 1) {
          leftG += g[cut];
          leftH += h[cut];
          leftN += n[cut];
          const rightN = members.length - leftN;
          if (leftN < minRows || rightN < minRows) continue;
          const rightG = totalG - leftG;
          const rightH = totalH - leftH;
          const gain = (leftG * leftG) / (leftH + regular) + (rightG * rightG) / (rightH + regular) - parent;
          if (gain > (best?.gain ?? 1e-12)) best = { feature, threshold: cuts[cut], gain };
        }
      }
    }
    if (!best) {
      tree.value[node] = leafValue(members);
      return node;
    }
    tree.feature[node] = best.feature;
    tree.threshold[node] = best.threshold;
    const left = members.filter((index) => rows[index][best.feature] <= best.threshold);
    const right = members.filter((index) => rows[index][best.feature] > best.threshold);
    tree.left[node] = grow(left, level + 1);
    tree.right[node] = grow(right, level + 1);
    return node;
  };
  grow(
    rows.map((_, index) => index),
    0,
  );
  return tree;
}
