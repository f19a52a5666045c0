/**
 * Trains the gatekeeper on the training split of data/gatekeeper/*.jsonl and writes
 * data/gatekeeper/model.json (commit it):
 *
 *   npm run train:gatekeeper
 *
 * Deterministic: the same data and options give the same file. Prints the cross-validated
 * scores on the training split; the held-out split is left to `npm run eval:gatekeeper`.
 */
import { statSync, writeFileSync } from 'node:fs';
import { createClassifier } from '../../classifier';
import { readDataset, splitDataset } from '../dataset';
import { evaluateGatekeeper, formatReport } from '../evaluate-gatekeeper';
import { GATEKEEPER_DATA_DIR, MODEL_FILE } from '../../files';
import { serializeModel } from '../../model-file';
import { resolveOptions } from '../../options';
import { trainGatekeeper } from '../train-gatekeeper';

function main(): void {
  const started = performance.now();
  const { training, heldOut } = splitDataset(readDataset(GATEKEEPER_DATA_DIR));
  const { model, folds } = trainGatekeeper(training);
  writeFileSync(MODEL_FILE, serializeModel(model));
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const options = resolveOptions({ cacheSize: 0 });
  const predictions = folds.flatMap((fold) => fold.test.map((prompt) => ({ prompt, classify: createClassifier(fold.model, options) })));
  const byPrompt = new Map(predictions.map(({ prompt, classify }) => [prompt.text, classify]));
  const report = evaluateGatekeeper(
    (text) => byPrompt.get(text)!(text),
    predictions.map(({ prompt }) => prompt),
  );
  process.stdout.write(
    [
      `trained on ${model.training.examples} prompts sent without context (${training.length - model.training.examples} with context ` +
        `left to the context rule; ${heldOut.length} held out) in ${seconds} s`,
      `temperature ${model.temperature.toFixed(3)}, ${model.rows.size} feature buckets`,
      `wrote ${MODEL_FILE} (${(statSync(MODEL_FILE).size / 1024).toFixed(0)} KiB)`,
      '',
      `cross-validated on the training split (${folds.length} folds):`,
      formatReport(report),
      '',
    ].join('\n'),
  );
}

main();
