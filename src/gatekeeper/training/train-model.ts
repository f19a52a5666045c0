import { FEATURE_BUCKETS, FEATURE_VERSION, type SparseVector } from '../extract-features';
import { LABELS, type Label } from '../labels';
import { softmax, type LinearModel } from '../linear-model';
import { createRandom, shuffled } from '../../random';

/** Hyperparameters of the SGD trainer. */
export type TrainingOptions = {
  /** Seeds the order examples are visited in; the same seed and data give the same model. Default 7. */
  seed: number;
  /** Passes over the data. Default 30. */
  epochs: number;
  /** Initial step size, decayed as 1 / (1 + rate * l2 * step). Default 0.5. */
  learningRate: number;
  /** L2 penalty; keeps weights of rare n-grams small. Default 1e-5. */
  l2: number;
};

export const DEFAULT_TRAINING_OPTIONS: Readonly<TrainingOptions> = Object.freeze({ seed: 7, epochs: 30, learningRate: 0.5, l2: 1e-5 });

export type TrainingExample = {
  features: SparseVector;
  label: Label;
  /** Multiplies this example's step (on top of its class weight). Default 1. */
  weight?: number;
};

/**
 * Multinomial logistic regression by plain SGD. The L2 decay is applied through a shared scale
 * factor (w = scale * v) so each step only touches the example's own buckets. Classes are
 * weighted inversely to their frequency, so the numerous MULTI prompts do not pull every doubtful
 * prompt their way.
 */
export function trainLinearModel(examples: readonly TrainingExample[], options: Partial<TrainingOptions> = {}): LinearModel {
  const settings = { ...DEFAULT_TRAINING_OPTIONS, ...options };
  const classes = LABELS.length;
  const targets = examples.map((example) => LABELS.indexOf(example.label));
  const counts = new Array<number>(classes).fill(0);
  for (const target of targets) counts[target]++;
  const present = counts.filter((count) => count > 0).length;
  const classWeight = counts.map((count) => (count > 0 ? examples.length / (present * count) : 0));

  // Only buckets that occur in the data can get a weight: number them densely so the weights fit
  // in one small array instead of one slot per bucket of the whole hashed space.
  const slots = new Map<number, number>();
  const local = examples.map(({ features }) =>
    Int32Array.from(features.indices, (bucket) => {
      let slot = slots.get(bucket);
      if (slot === undefined) {
        slot = slots.size;
        slots.set(bucket, slot);
      }
      return slot;
    }),
  );
  const vectors = new Float64Array(slots.size * classes);
  const bias = new Float64Array(classes);
  const random = createRandom(settings.seed);
  const order = examples.map((_, index) => index);
  let scale = 1;
  let step = 0;
  const logits = new Float64Array(classes);
  const gradient = new Float64Array(classes);
  for (let epoch = 0; epoch < settings.epochs; epoch++) {
    for (const index of shuffled(order, random)) {
      const rate = settings.learningRate / (1 + settings.learningRate * settings.l2 * step++);
      const indices = local[index];
      const values = examples[index].features.values;
      const target = targets[index];
      logits.set(bias);
      for (let position = 0; position < indices.length; position++) {
        const offset = indices[position] * classes;
        const value = values[position] * scale;
        for (let label = 0; label < classes; label++) logits[label] += vectors[offset + label] * value;
      }
      const probabilities = softmax(logits);
      for (let label = 0; label < classes; label++) {
        gradient[label] = (probabilities[label] - (label === target ? 1 : 0)) * classWeight[target] * (examples[index].weight ?? 1);
      }
      scale *= 1 - rate * settings.l2;
      for (let position = 0; position < indices.length; position++) {
        const offset = indices[position] * classes;
        const delta = (rate * values[position]) / scale;
        for (let label = 0; label < classes; label++) vectors[offset + label] -= delta * gradient[label];
      }
      for (let label = 0; label < classes; label++) bias[label] -= rate * gradient[label];
      if (scale < 1e-6) {
        for (let offset = 0; offset < vectors.length; offset++) vectors[offset] *= scale;
        scale = 1;
      }
    }
  }

  const rows = new Map<number, number>();
  for (const [bucket, slot] of slots) rows.set(bucket, slot * classes);
  const weights = vectors.map((weight) => weight * scale);
  const labelCounts: Partial<Record<Label, number>> = {};
  LABELS.forEach((label, index) => {
    if (counts[index] > 0) labelCounts[label] = counts[index]!;
  });
  return {
    labels: LABELS,
    featureVersion: FEATURE_VERSION,
    buckets: FEATURE_BUCKETS,
    temperature: 1,
    bias,
    rows,
    weights,
    training: {
      seed: settings.seed,
      epochs: settings.epochs,
      learningRate: settings.learningRate,
      l2: settings.l2,
      examples: examples.length,
      labelCounts,
    },
  };
}

/**
 * Temperature scaling: the one scalar T minimising the negative log-likelihood of predictions the
 * models made on examples they were not trained on. A grid search is enough for one parameter
 * and is deterministic.
 */
export function fitTemperature(predictions: ReadonlyArray<{ logits: Float64Array; label: Label }>): number {
  let best = { temperature: 1, loss: Infinity };
  for (let step = 0; step <= 80; step++) {
    const temperature = Math.exp(Math.log(0.2) + (step / 80) * Math.log(25));
    let loss = 0;
    for (const prediction of predictions) {
      const probabilities = softmax(prediction.logits, temperature);
      loss -= Math.log(Math.max(probabilities[LABELS.indexOf(prediction.label)], 1e-12));
    }
    if (loss < best.loss) best = { temperature, loss };
  }
  return best.temperature;
}
