import type { Label } from './labels';
import type { SparseVector } from './extract-features';

/** How a model was trained, kept in the model file so a retrain can be reproduced and compared. */
export type TrainingSummary = {
  seed: number;
  epochs: number;
  learningRate: number;
  l2: number;
  examples: number;
  /** Examples per label in the training split. */
  labelCounts: Partial<Record<Label, number>>;
};

/**
 * A multinomial logistic regression over hashed features. Only buckets with a weight are kept:
 * `rows` maps a bucket to the offset of its `labels.length` weights in `weights`.
 */
export type LinearModel = {
  labels: readonly Label[];
  featureVersion: number;
  buckets: number;
  /** Divides the logits before the softmax; fitted on held-out folds so confidences mean what they say. */
  temperature: number;
  bias: Float64Array;
  rows: Map<number, number>;
  weights: Float64Array;
  training: TrainingSummary;
};

export function scoreLogits(model: LinearModel, features: SparseVector): Float64Array {
  const classes = model.labels.length;
  const logits = Float64Array.from(model.bias);
  for (let position = 0; position < features.indices.length; position++) {
    const offset = model.rows.get(features.indices[position]);
    if (offset === undefined) continue;
    const value = features.values[position];
    for (let label = 0; label < classes; label++) logits[label] += model.weights[offset + label] * value;
  }
  return logits;
}

export function softmax(logits: Float64Array, temperature = 1): Float64Array {
  let max = -Infinity;
  for (const logit of logits) max = Math.max(max, logit);
  const probabilities = new Float64Array(logits.length);
  let sum = 0;
  for (let label = 0; label < logits.length; label++) {
    probabilities[label] = Math.exp((logits[label] - max) / temperature);
    sum += probabilities[label];
  }
  for (let label = 0; label < logits.length; label++) probabilities[label] /= sum;
  return probabilities;
}

/** Calibrated probabilities, in the order of `model.labels`. */
export function predictProbabilities(model: LinearModel, features: SparseVector): Float64Array {
  return softmax(scoreLogits(model, features), model.temperature);
}
