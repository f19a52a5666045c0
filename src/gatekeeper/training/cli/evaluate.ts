/**
 * Scores the committed model on the held-out split and fails (exit 1) below the quality bar:
 *
 *   npm run eval:gatekeeper
 *
 * Prints, for generated and hand-written held-out prompts apart (hand-written also split by
 * whether the prompt came with context): blocked-clear rate, accuracy and macro-F1; the share of
 * the clear repository questions (test/gatekeeper/fixtures) that reach the model with REPOSITORY
 * context; the conversational turns and follow-ups (data/gatekeeper/conversations), each with its
 * conversation, by kind; the operating point (thresholds) in force and its confusion matrices.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../paths';
import { NO_CONTEXT } from '../../context';
import { isHandWritten, parseJsonl, readDataset, splitDataset, type LabelledPrompt } from '../dataset';
import { evaluateGatekeeper, formatReport, formatSummaryRow, SUMMARY_HEADER, type ClassifyWithContext } from '../evaluate-gatekeeper';
import { GATEKEEPER_DATA_DIR } from '../../files';
import { loadGatekeeper } from '../../load-gatekeeper';
import { parseModel } from '../../model-file';
import { MAX_BLOCKED_CLEAR, sweepOperatingPoints } from '../operating-point';
import { QUALITY_BAR } from '../quality-bar';
import { evaluateConversationTurns, formatTurnReport, readConversationTurns } from '../conversation-turns';
import { MODEL_FILE } from '../../files';

/** Clear codebase questions written before tuning; the aiAction test sends them with REPOSITORY context. */
export const REPOSITORY_QUESTIONS_FILE = path.join(PROJECT_ROOT, 'test', 'gatekeeper', 'fixtures', 'repository-questions.txt');

export function readRepositoryQuestions(): string[] {
  return readFileSync(REPOSITORY_QUESTIONS_FILE, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

/**
 * Hand-written prompts kept out of data/gatekeeper altogether, written after the first tuning round
 * and before the last: never trained on and never tuned on, the one untouched check.
 */
export const FRESH_PROMPTS_FILE = path.join(PROJECT_ROOT, 'test', 'gatekeeper', 'fixtures', 'fresh-prompts.jsonl');

/** Conversational turns written after the conversation rules were tuned on data/gatekeeper/conversations: the untouched check. */
export const FRESH_CONVERSATION_TURNS_FILE = path.join(PROJECT_ROOT, 'test', 'gatekeeper', 'fixtures', 'fresh-conversation-turns.jsonl');

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
  const fresh = parseJsonl(readFileSync(FRESH_PROMPTS_FILE, 'utf8'), 'fresh-prompts.jsonl');
  groups.push(['fresh check, no context (never tuned on)', fresh.filter((prompt) => prompt.context === 'none')]);
  groups.push(['fresh check, with context (never tuned on)', fresh.filter((prompt) => prompt.context !== 'none')]);
  const reports = groups.map(([name, prompts]) => [name, evaluateGatekeeper(classify, prompts)] as const);
  const questions = readRepositoryQuestions();
  const codebase = { ...NO_CONTEXT, codebase: true };
  const reached = (context: typeof NO_CONTEXT) =>
    questions.filter((question) => gatekeeper.classify(question, context).status === 'CLEAR').length;
  const { options } = gatekeeper;

  const out: string[] = [];
  out.push(SUMMARY_HEADER);
  for (const [name, report] of reports) out.push(formatSummaryRow(name, report));
  out.push('');
  out.push(`clear repository questions reaching the model (${questions.length}, written before tuning):`);
  out.push(
    `  with REPOSITORY context ${reached(codebase)}/${questions.length} (${percent(reached(codebase) / questions.length)}), without ` +
      `context ${reached(NO_CONTEXT)}/${questions.length} (${percent(reached(NO_CONTEXT) / questions.length)})`,
  );
  out.push('');
  const turns = readConversationTurns();
  const conversation = evaluateConversationTurns(classify, turns);
  out.push(`conversational turns and follow-ups, each sent after its conversation (${turns.length}, written before tuning):`);
  out.push(formatTurnReport(conversation));
  const freshTurns = readConversationTurns(FRESH_CONVERSATION_TURNS_FILE);
  out.push('', `fresh conversational turns (${freshTurns.length}, written after the rules, never tuned on):`);
  out.push(formatTurnReport(evaluateConversationTurns(classify, freshTurns)));
  out.push('');
  out.push(
    `operating point: clearThreshold ${options.clearThreshold}, confirmThreshold ${options.confirmThreshold}, vagueThreshold ` +
      `${options.vagueThreshold}, ` +
      `multiIntentThreshold ${options.multiIntentThreshold}, contextShareThreshold ${options.contextShareThreshold}`,
  );
  out.push('', `operating points on the held-out prompts sent without context (blocked-clear must stay <= ${percent(MAX_BLOCKED_CLEAR)}):`);
  out.push(
    `${'clear'.padStart(6)}${'multi'.padStart(7)}${'vague'.padStart(7)}${'hand blocked'.padStart(14)}${'hand acc'.padStart(10)}` +
      `${'hand F1'.padStart(9)}${'gen blocked'.padStart(13)}${'gen acc'.padStart(9)}`,
  );
  const sweep = sweepOperatingPoints(parseModel(readFileSync(MODEL_FILE, 'utf8')), heldOut, {
    partThreshold: options.partThreshold,
    multiIntentSupport: options.multiIntentSupport,
    contextShareThreshold: options.contextShareThreshold,
  });
  const inForce = (point: (typeof sweep.points)[number]) =>
    point.clearThreshold === options.clearThreshold &&
    point.multiIntentThreshold === options.multiIntentThreshold &&
    point.vagueThreshold === options.vagueThreshold;
  for (const point of sweep.points.filter((candidate) => candidate.admissible || inForce(candidate))) {
    const mark =
      `${point === sweep.chosen ? '  <- chosen' : ''}${inForce(point) ? '  (in force)' : ''}` +
      `${point.admissible ? '' : '  (blocks too many)'}`;
    out.push(
      `${String(point.clearThreshold).padStart(6)}${String(point.multiIntentThreshold).padStart(7)}` +
        `${String(point.vagueThreshold).padStart(7)}${percent(point.handWritten.blockedClear).padStart(14)}` +
        `${percent(point.handWritten.accuracy).padStart(10)}${percent(point.handWritten.macroF1).padStart(9)}` +
        `${percent(point.generated.blockedClear).padStart(13)}${percent(point.generated.accuracy).padStart(9)}${mark}`,
    );
  }
  out.push(
    `(${sweep.points.filter((point) => !point.admissible).length} of ${sweep.points.length} points stop more than ` +
      `${percent(MAX_BLOCKED_CLEAR)} of clear prompts and are not listed)`,
  );
  if (sweep.chosen && !inForce(sweep.chosen)) {
    out.push(`NOTE: the defaults in src/gatekeeper/options.ts differ from the chosen point; update them.`);
  }
  for (const [name, report] of reports.slice(0, 3))
    out.push('', `${name} (${report.examples} prompts), at the operating point in force:`, formatReport(report));
  process.stdout.write(`${out.join('\n')}\n\n`);

  const byName = new Map(reports);
  const whole = byName.get('whole held-out split')!;
  const handWrittenAlone = byName.get('hand-written held-out, no context')!;
  const generatedAlone = byName.get('generated held-out (no context)')!;
  const reach = reached(codebase) / questions.length;
  const failures: string[] = [];
  if (whole.accuracy < QUALITY_BAR.minAccuracy) failures.push(`accuracy ${whole.accuracy.toFixed(3)} < ${QUALITY_BAR.minAccuracy}`);
  if (whole.macroF1 < QUALITY_BAR.minMacroF1) failures.push(`macro-F1 ${whole.macroF1.toFixed(3)} < ${QUALITY_BAR.minMacroF1}`);
  if (handWrittenAlone.accuracy < QUALITY_BAR.minHandWrittenAccuracy)
    failures.push(`hand-written accuracy ${handWrittenAlone.accuracy.toFixed(3)} < ${QUALITY_BAR.minHandWrittenAccuracy}`);
  for (const [name, report] of [
    ['hand-written', handWrittenAlone],
    ['generated', generatedAlone],
  ] as const) {
    if (report.blockedClear > QUALITY_BAR.maxBlockedClear)
      failures.push(`${name} blocked-clear ${report.blockedClear.toFixed(3)} > ${QUALITY_BAR.maxBlockedClear}`);
  }
  if (reach < QUALITY_BAR.minRepositoryReach)
    failures.push(`repository questions reaching the model ${reach.toFixed(3)} < ${QUALITY_BAR.minRepositoryReach}`);
  if (failures.length > 0) {
    process.stderr.write(`gatekeeper below the quality bar: ${failures.join('; ')}\n`);
    return 1;
  }
  process.stdout.write(`quality bar met: ${JSON.stringify(QUALITY_BAR)}\n`);
  return 0;
}

if (require.main === module) process.exitCode = main();
