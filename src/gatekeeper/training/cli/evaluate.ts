/**
 * Scores the committed model on the held-out split and fails (exit 1) below the quality bar:
 *
 *   npm run eval:gatekeeper
 */
import { readDataset, splitDataset } from '../dataset';
import { evaluateGatekeeper, formatReport } from '../evaluate-gatekeeper';
import { GATEKEEPER_DATA_DIR } from '../../files';
import { loadGatekeeper } from '../../load-gatekeeper';
import { QUALITY_BAR } from '../quality-bar';

function main(): number {
  const gatekeeper = loadGatekeeper({ cacheSize: 0 });
  const { heldOut } = splitDataset(readDataset(GATEKEEPER_DATA_DIR));
  const report = evaluateGatekeeper((prompt) => gatekeeper.classify(prompt), heldOut);
  const handWritten = heldOut.filter((prompt) => prompt.source === 'hand-written.jsonl');
  const handWrittenReport = evaluateGatekeeper((prompt) => gatekeeper.classify(prompt), handWritten);
  process.stdout.write(`held-out split (${heldOut.length} prompts never used in training):\n${formatReport(report)}\n\n`);
  process.stdout.write(
    `hand-written prompts only (${handWritten.length}): accuracy ${(handWrittenReport.accuracy * 100).toFixed(1)}%, macro-F1 ${(handWrittenReport.macroF1 * 100).toFixed(1)}%\n\n`,
  );
  const failures: string[] = [];
  if (report.accuracy < QUALITY_BAR.minAccuracy) failures.push(`accuracy ${report.accuracy.toFixed(3)} < ${QUALITY_BAR.minAccuracy}`);
  if (report.macroF1 < QUALITY_BAR.minMacroF1) failures.push(`macro-F1 ${report.macroF1.toFixed(3)} < ${QUALITY_BAR.minMacroF1}`);
  if (failures.length > 0) {
    process.stderr.write(`gatekeeper below the quality bar: ${failures.join('; ')}\n`);
    return 1;
  }
  process.stdout.write(`quality bar met (accuracy >= ${QUALITY_BAR.minAccuracy}, macro-F1 >= ${QUALITY_BAR.minMacroF1})\n`);
  return 0;
}

process.exitCode = main();
