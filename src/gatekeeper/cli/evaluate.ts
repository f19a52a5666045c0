/**
 * Scores the committed model on the held-out split and fails (exit 1) below the quality bar:
 *
 *   npm run eval:gatekeeper
 *
 * Prints, for generated and hand-written held-out prompts apart (hand-written also split by
 * whether the prompt came with context): blocked-clear rate, accuracy and macro-F1; the share of
 * the clear repository questions (test/gatekeeper/fixtures) that reach the model with REPOSITORY
 * context; the operating point (thresholds) in force and its confusion matrices.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../paths';
import { NO_CONTEXT } from '../context';
import { isHandWritten, readDataset, splitDataset, type LabelledPrompt } from '../dataset';
import { evaluateGatekeeper, formatReport, formatSummaryRow, SUMMARY_HEADER, type ClassifyWithContext } from '../evaluate-gatekeeper';
import { GATEKEEPER_DATA_DIR } from '../files';
import { loadGatekeeper } from '../load-gatekeeper';
import { QUALITY_BAR } from '../quality-bar';

/** Clear codebase questions written before tuning; the aiAction test sends them with REPOSITORY context. */
export const REPOSITORY_QUESTIONS_FILE = path.join(PROJECT_ROOT, 'test', 'gatekeeper', 'fixtures', 'repository-questions.txt');

export function readRepositoryQuestions(): string[] {
  return readFileSync(REPOSITORY_QUESTIONS_FILE, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;

function main(): number {
  const gatekeeper = loadGatekeeper({ cacheSize: 0 });
  const classify: ClassifyWithContext = (prompt, context) => gatekeeper.classify(prompt, context);
  const { heldOut } = splitDataset(readDataset(GATEKEEPER_DATA_DIR));
  const generated = heldOut.filter((prompt) => !isHandWritten(prompt));
  const handWritten = heldOut.filter(isHandWritten);
  const groups: Array<[string, LabelledPrompt[]]> = [
    ['generated held-out (no context)', generated],
    ['hand-written held-out, no context', handWritten.filter((prompt) => prompt.context === 'none')],
    ['hand-written held-out, with context', handWritten.filter((prompt) => prompt.context !== 'none')],
    ['hand-written held-out, all', handWritten],
    ['whole held-out split', heldOut],
  ];
  const reports = groups.map(([name, prompts]) => [name, evaluateGatekeeper(classify, prompts)] as const);
  const questions = readRepositoryQuestions();
  const codebase = { ...NO_CONTEXT, codebase: true };
  const reached = (context: typeof NO_CONTEXT) => questions.filter((question) => gatekeeper.classify(question, context).status === 'CLEAR').length;
  const { options } = gatekeeper;

  const out: string[] = [];
  out.push(SUMMARY_HEADER);
  for (const [name, report] of reports) out.push(formatSummaryRow(name, report));
  out.push('');
  out.push(`clear repository questions reaching the model (${questions.length}, written before tuning):`);
  out.push(`  with REPOSITORY context ${reached(codebase)}/${questions.length} (${percent(reached(codebase) / questions.length)}), without context ${reached(NO_CONTEXT)}/${questions.length} (${percent(reached(NO_CONTEXT) / questions.length)})`);
  out.push('');
  out.push(
    `operating point: clearThreshold ${options.clearThreshold}, confirmThreshold ${options.confirmThreshold}, ` +
      `multiIntentThreshold ${options.multiIntentThreshold}, contextShareThreshold ${options.contextShareThreshold}`,
  );
  for (const [name, report] of reports.slice(0, 3)) out.push('', `${name} (${report.examples} prompts):`, formatReport(report));
  process.stdout.write(`${out.join('\n')}\n\n`);

  const whole = reports.at(-1)![1];
  const failures: string[] = [];
  if (whole.accuracy < QUALITY_BAR.minAccuracy) failures.push(`accuracy ${whole.accuracy.toFixed(3)} < ${QUALITY_BAR.minAccuracy}`);
  if (whole.macroF1 < QUALITY_BAR.minMacroF1) failures.push(`macro-F1 ${whole.macroF1.toFixed(3)} < ${QUALITY_BAR.minMacroF1}`);
  if (failures.length > 0) {
    process.stderr.write(`gatekeeper below the quality bar: ${failures.join('; ')}\n`);
    return 1;
  }
  process.stdout.write(`quality bar met on the whole held-out split (accuracy >= ${QUALITY_BAR.minAccuracy}, macro-F1 >= ${QUALITY_BAR.minMacroF1})\n`);
  return 0;
}

if (require.main === module) process.exitCode = main();
