import { FEATURE_NAMES, scoreFeatures, type RankerModel } from '../file-features';
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
