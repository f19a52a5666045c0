import { isHandWritten, type LabelledPrompt } from './dataset';
import { extractFeatures, type SparseVector } from '../extract-features';
import { fnv1a, seedFor } from '../hash';
import { scoreLogits, type LinearModel } from '../linear-model';
import { fitTemperature, trainLinearModel, DEFAULT_TRAINING_OPTIONS, type TrainingExample, type TrainingOptions } from './train-model';

/** Training options plus the cross-validation that fits the temperature. */
export type TrainGatekeeperOptions = TrainingOptions & {
  /** Folds for cross-validation; their out-of-fold predictions fit the temperature. Default 5. */
  folds: number;
  /**
   * Hand-written prompts count this many times a generated one: they are closer to what people
   * type, and the generator's many variants of a template would otherwise teach its style.
   */
  handWrittenWeight: number;
};

export const DEFAULT_TRAIN_GATEKEEPER_OPTIONS: Readonly<TrainGatekeeperOptions> = Object.freeze({
  ...DEFAULT_TRAINING_OPTIONS,
  folds: 5,
  handWrittenWeight: 3,
});

/** A model trained without one fold, and that fold: for honest estimates without the held-out set. */
export type Fold = { model: LinearModel; test: LabelledPrompt[] };

export type TrainedGatekeeper = { model: LinearModel; folds: Fold[] };

const FOLD_SEED = seedFor('gatekeeper-cross-validation');

function featurize(prompts: readonly LabelledPrompt[], cache: Map<string, SparseVector>, handWrittenWeight: number): TrainingExample[] {
  return prompts.map((prompt) => {
    let features = cache.get(prompt.text);
    if (features === undefined) {
      features = extractFeatures(prompt.text);
      cache.set(prompt.text, features);
    }
    return { features, label: prompt.label, weight: isHandWritten(prompt) ? handWrittenWeight : 1 };
  });
}

/**
 * Trains the shipped model on the training split: k fold models first, whose predictions on the
 * fold they did not see fit the softmax temperature, then the final model on every prompt with
 * that temperature. Prompts marked with a context are left out (see below). Deterministic for the
 * same prompts and options.
 */
export function trainGatekeeper(labelled: readonly LabelledPrompt[], options: Partial<TrainGatekeeperOptions> = {}): TrainedGatekeeper {
  const settings = { ...DEFAULT_TRAIN_GATEKEEPER_OPTIONS, ...options };
  // The model reads text only: it learns from prompts sent with nothing attached. Records with
  // context ("fix it" with selected code is FIX_CODE) are for the context rule in the classifier.
  const prompts = labelled.filter((prompt) => prompt.context === 'none');
  const cache = new Map<string, SparseVector>();
  const foldOf = (prompt: LabelledPrompt) => fnv1a(prompt.text, FOLD_SEED) % settings.folds;
  const folds: Fold[] = [];
  const outOfFold: Array<{ logits: Float64Array; label: LabelledPrompt['label'] }> = [];
  for (let fold = 0; fold < settings.folds; fold++) {
    const test = prompts.filter((prompt) => foldOf(prompt) === fold);
    const train = prompts.filter((prompt) => foldOf(prompt) !== fold);
    if (test.length === 0 || train.length === 0) continue;
    const model = trainLinearModel(featurize(train, cache, settings.handWrittenWeight), settings);
    for (const example of featurize(test, cache, settings.handWrittenWeight))
      outOfFold.push({ logits: scoreLogits(model, example.features), label: example.label });
    folds.push({ model, test });
  }
  const temperature = outOfFold.length > 0 ? fitTemperature(outOfFold) : 1;
  for (const fold of folds) fold.model.temperature = temperature;
  const model = trainLinearModel(featurize(prompts, cache, settings.handWrittenWeight), settings);
  model.temperature = temperature;
  return { model, folds };
}
