import { readFileSync } from 'node:fs';
import { renderGeneratedData } from '../../src/gatekeeper/training/cli/generate-data';
import {
  isHeldOut,
  normalizePrompt,
  parseJsonl,
  readDataset,
  splitDataset,
  HELD_OUT_PERCENT,
  type LabelledPrompt,
} from '../../src/gatekeeper/training/dataset';
import { extractFeatures } from '../../src/gatekeeper/extract-features';
import { GATEKEEPER_DATA_DIR, GENERATED_DATA_FILE } from '../../src/gatekeeper/files';
import { INTENTS, LABELS } from '../../src/gatekeeper/labels';
import { predictProbabilities } from '../../src/gatekeeper/linear-model';
import { parseModel, serializeModel } from '../../src/gatekeeper/model-file';
import { trainGatekeeper } from '../../src/gatekeeper/training/train-gatekeeper';
import { fitTemperature } from '../../src/gatekeeper/training/train-model';

const dataset = readDataset(GATEKEEPER_DATA_DIR);
const { training, heldOut } = splitDataset(dataset);

// A small slice with every label, so a test trains in well under a second.
function slice(perLabel: number): LabelledPrompt[] {
  return LABELS.flatMap((label) => training.filter((prompt) => prompt.label === label).slice(0, perLabel));
}

describe('training data', () => {
  it('has at least 900 prompts covering every label, with typos, pasted code and stack traces', () => {
    expect(dataset.length).toBeGreaterThanOrEqual(900);
    for (const label of LABELS) expect(dataset.filter((prompt) => prompt.label === label).length).toBeGreaterThanOrEqual(60);
    expect(dataset.some((prompt) => prompt.text.includes('```'))).toBe(true);
    expect(dataset.some((prompt) => /Traceback|\n\s+at /.test(prompt.text))).toBe(true);
    expect(dataset.some((prompt) => prompt.text === 'expln this fn')).toBe(true);
  });

  it('holds out about a fifth of the prompts by a stable hash that ignores case and whitespace', () => {
    const share = (heldOut.length / dataset.length) * 100;
    expect(share).toBeGreaterThan(HELD_OUT_PERCENT - 5);
    expect(share).toBeLessThan(HELD_OUT_PERCENT + 5);
    const heldOutKeys = new Set(heldOut.map((prompt) => normalizePrompt(prompt.text)));
    expect(training.some((prompt) => heldOutKeys.has(normalizePrompt(prompt.text)))).toBe(false);
    for (const prompt of heldOut.slice(0, 20)) expect(isHeldOut(`  ${prompt.text.toUpperCase()}\n`)).toBe(true);
  });

  it('matches what the generator produces (regenerate with src/gatekeeper/training/cli/generate-data.ts)', () => {
    expect(readFileSync(GENERATED_DATA_FILE, 'utf8') === renderGeneratedData()).toBe(true);
  });

  it('rejects malformed lines', () => {
    expect(() => parseJsonl('{"text":"hi","label":"NOPE"}', 'x.jsonl')).toThrow(/x.jsonl:1: unknown label/);
    expect(() => parseJsonl('{"text":"a and b","label":"MULTI","intents":["FIX_CODE"]}', 'x.jsonl')).toThrow(
      /two or more different intents/,
    );
    expect(parseJsonl('{"text":"a and b","label":"MULTI","intents":["FIX_CODE","WRITE_TESTS"]}', 'x.jsonl')[0].intents).toEqual([
      'FIX_CODE',
      'WRITE_TESTS',
    ]);
  });
});

describe('training', () => {
  const options = { folds: 3, epochs: 8 };

  it('gives the same model file for the same data and seed', () => {
    const first = serializeModel(trainGatekeeper(slice(25), options).model);
    const second = serializeModel(trainGatekeeper(slice(25), options).model);
    expect(first === second).toBe(true);
    expect(serializeModel(trainGatekeeper(slice(25), { ...options, seed: 8 }).model) === first).toBe(false);
  });

  it('learns its training slice and fits a temperature on the folds', () => {
    const prompts = slice(25);
    const { model, folds } = trainGatekeeper(prompts, options);
    expect(folds).toHaveLength(3);
    expect(folds.every((fold) => fold.model.temperature === model.temperature)).toBe(true);
    const correct = prompts.filter((prompt) => {
      const probabilities = predictProbabilities(model, extractFeatures(prompt.text));
      return LABELS[probabilities.indexOf(Math.max(...probabilities))] === prompt.label;
    });
    expect(correct.length / prompts.length).toBeGreaterThan(0.9);
  });

  it('fits a temperature above 1 for over-confident predictions and below 1 for timid ones', () => {
    const sharp = [5, 0, 0, 0, 0, 0, 0, 0, 0];
    const flat = [0.4, 0, 0, 0, 0, 0, 0, 0, 0];
    const predictions = (logits: number[], rightShare: number) =>
      Array.from({ length: 100 }, (_, index) => ({
        logits: Float64Array.from(logits),
        label: index < rightShare * 100 ? LABELS[0] : LABELS[1],
      }));
    expect(fitTemperature(predictions(sharp, 0.6))).toBeGreaterThan(1);
    expect(fitTemperature(predictions(flat, 0.99))).toBeLessThan(1);
  });

  it('round-trips through the model file without changing predictions beyond rounding', () => {
    const model = trainGatekeeper(slice(15), options).model;
    const reloaded = parseModel(serializeModel(model));
    for (const prompt of heldOut.slice(0, 30)) {
      const before = predictProbabilities(model, extractFeatures(prompt.text));
      const after = predictProbabilities(reloaded, extractFeatures(prompt.text));
      before.forEach((probability, index) => expect(after[index]).toBeCloseTo(probability, 2));
    }
  });

  it('refuses a model file from other features or labels', () => {
    const file = JSON.parse(serializeModel(trainGatekeeper(slice(5), { folds: 2, epochs: 1 }).model)) as Record<string, unknown>;
    expect(() => parseModel(JSON.stringify({ ...file, featureVersion: 999 }))).toThrow(/feature version 999/);
    expect(() => parseModel(JSON.stringify({ ...file, labels: [...INTENTS, 'MULTI', 'VAGUE'] }))).toThrow(/retrain/);
    expect(() => parseModel('{"format":"something else"}')).toThrow(/not a gatekeeper model/);
  });
});
