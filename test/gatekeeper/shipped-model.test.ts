import { readFileSync } from 'node:fs';
import { readRepositoryQuestions } from '../../src/gatekeeper/training/cli/evaluate';
import { NO_CONTEXT } from '../../src/gatekeeper/context';
import { isHandWritten, readDataset, splitDataset } from '../../src/gatekeeper/training/dataset';
import { evaluateGatekeeper } from '../../src/gatekeeper/training/evaluate-gatekeeper';
import { GATEKEEPER_DATA_DIR, MODEL_FILE } from '../../src/gatekeeper/files';
import { loadGatekeeper } from '../../src/gatekeeper/load-gatekeeper';
import { parseModel } from '../../src/gatekeeper/model-file';
import { QUALITY_BAR } from '../../src/gatekeeper/training/quality-bar';
import { trainGatekeeper } from '../../src/gatekeeper/training/train-gatekeeper';

const { training, heldOut } = splitDataset(readDataset(GATEKEEPER_DATA_DIR));
const shipped = parseModel(readFileSync(MODEL_FILE, 'utf8'));

describe('the committed model', () => {
  it('meets the quality bar on the held-out split', () => {
    const gatekeeper = loadGatekeeper({ model: shipped, cacheSize: 0 });
    const report = evaluateGatekeeper((prompt, context) => gatekeeper.classify(prompt, context), heldOut);
    expect(report.accuracy).toBeGreaterThanOrEqual(QUALITY_BAR.minAccuracy);
    expect(report.macroF1).toBeGreaterThanOrEqual(QUALITY_BAR.minMacroF1);
    // Every label is predicted at all: a model that drops one can still average well.
    for (const scores of report.perLabel) expect(scores.recall).toBeGreaterThan(0.7);
  });

  it('stops at most 2% of clear held-out prompts sent without context, hand-written and generated alike', () => {
    const gatekeeper = loadGatekeeper({ model: shipped, cacheSize: 0 });
    const classify = (prompt: string) => gatekeeper.classify(prompt);
    const alone = heldOut.filter((prompt) => prompt.context === 'none');
    const handWritten = evaluateGatekeeper(classify, alone.filter(isHandWritten));
    const generated = evaluateGatekeeper(
      classify,
      alone.filter((prompt) => !isHandWritten(prompt)),
    );
    expect(handWritten.examples).toBeGreaterThan(100);
    expect(handWritten.blockedClear).toBeLessThanOrEqual(QUALITY_BAR.maxBlockedClear);
    expect(generated.blockedClear).toBeLessThanOrEqual(QUALITY_BAR.maxBlockedClear);
    expect(handWritten.accuracy).toBeGreaterThanOrEqual(QUALITY_BAR.minHandWrittenAccuracy);
  });

  it('lets the clear repository questions through with repository context', () => {
    const gatekeeper = loadGatekeeper({ model: shipped, cacheSize: 0 });
    const questions = readRepositoryQuestions();
    const through = questions.filter((question) => gatekeeper.classify(question, { ...NO_CONTEXT, codebase: true }).status === 'CLEAR');
    expect(through.length / questions.length).toBeGreaterThanOrEqual(QUALITY_BAR.minRepositoryReach);
  });

  it('is what training on the committed data produces (run npm run train:gatekeeper after changing data or features)', () => {
    const retrained = trainGatekeeper(training).model;
    expect(retrained.training).toEqual(shipped.training);
    expect(retrained.temperature).toBeCloseTo(shipped.temperature, 3);
    // Buckets whose weights round to zero are not in the file: compare as if they were zeros.
    const classes = shipped.labels.length;
    let largest = 0;
    for (const bucket of new Set([...retrained.rows.keys(), ...shipped.rows.keys()])) {
      for (let label = 0; label < classes; label++) {
        const mine = retrained.rows.has(bucket) ? retrained.weights[retrained.rows.get(bucket)! + label] : 0;
        const theirs = shipped.rows.has(bucket) ? shipped.weights[shipped.rows.get(bucket)! + label] : 0;
        largest = Math.max(largest, Math.abs(mine - theirs));
      }
    }
    expect(largest).toBeLessThan(2e-3);
  });
});
