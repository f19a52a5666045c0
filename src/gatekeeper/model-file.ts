import { z } from 'zod';
import { AppError } from '../errors';
import { FEATURE_VERSION } from './extract-features';
import { LABELS } from './labels';
import type { LinearModel } from './linear-model';

const FORMAT = 'duo-gatekeeper-linear/1';
/** Four decimals keep the file small and change no prediction we measured. */
const DECIMALS = 4;

const modelFileSchema = z.object({
  format: z.literal(FORMAT),
  featureVersion: z.number().int(),
  labels: z.array(z.enum(LABELS)).min(2),
  buckets: z.number().int().positive(),
  temperature: z.number().positive(),
  bias: z.array(z.number()),
  training: z.object({
    seed: z.number(),
    epochs: z.number(),
    learningRate: z.number(),
    l2: z.number(),
    examples: z.number(),
    labelCounts: z.record(z.string(), z.number()),
  }),
  rows: z.array(z.array(z.number())),
});

const round = (value: number) => {
  const rounded = Number(value.toFixed(DECIMALS));
  return Object.is(rounded, -0) ? 0 : rounded;
};

/**
 * One row per line ([bucket, ...weights]) so a retrain shows as a readable diff; buckets whose
 * weights all round to zero are dropped.
 */
export function serializeModel(model: LinearModel): string {
  const classes = model.labels.length;
  const rows: string[] = [];
  const buckets = [...model.rows.keys()].sort((left, right) => left - right);
  for (const bucket of buckets) {
    const offset = model.rows.get(bucket)!;
    const weights = Array.from(model.weights.subarray(offset, offset + classes), round);
    if (weights.every((weight) => weight === 0)) continue;
    rows.push(JSON.stringify([bucket, ...weights]));
  }
  const header = {
    format: FORMAT,
    featureVersion: model.featureVersion,
    labels: model.labels,
    buckets: model.buckets,
    temperature: round(model.temperature),
    bias: Array.from(model.bias, round),
    training: model.training,
  };
  const head = JSON.stringify(header, null, 2).replace(/\n}$/, '');
  return `${head},\n  "rows": [\n    ${rows.join(',\n    ')}\n  ]\n}\n`;
}

function invalid(reason: string, cause?: unknown): AppError {
  return new AppError({
    code: 'INTERNAL',
    userMessage: 'The chat gatekeeper model could not be loaded',
    internalMessage: `gatekeeper model file: ${reason}`,
    cause,
  });
}

/** Parses and checks a model file; a model from other features or labels is refused, not guessed at. */
export function parseModel(json: string): LinearModel {
  let data: z.infer<typeof modelFileSchema>;
  try {
    data = modelFileSchema.parse(JSON.parse(json));
  } catch (error) {
    throw invalid('not a gatekeeper model', error);
  }
  if (data.featureVersion !== FEATURE_VERSION) {
    throw invalid(`trained on feature version ${data.featureVersion}, this code extracts version ${FEATURE_VERSION}: retrain it`);
  }
  if (data.labels.join() !== LABELS.join()) throw invalid(`labels ${data.labels.join()} differ from ${LABELS.join()}: retrain it`);
  const classes = data.labels.length;
  if (data.bias.length !== classes) throw invalid('bias length differs from the label count');
  const rows = new Map<number, number>();
  const weights = new Float64Array(data.rows.length * classes);
  data.rows.forEach((row, index) => {
    if (row.length !== classes + 1) throw invalid(`row ${index} has ${row.length - 1} weights, expected ${classes}`);
    rows.set(row[0], index * classes);
    weights.set(row.slice(1), index * classes);
  });
  return {
    labels: data.labels,
    featureVersion: data.featureVersion,
    buckets: data.buckets,
    temperature: data.temperature,
    bias: Float64Array.from(data.bias),
    rows,
    weights,
    training: { ...data.training, labelCounts: data.training.labelCounts },
  };
}
