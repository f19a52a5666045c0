import { contextOfRecord, type GatekeeperContext } from '../context';
import { CONVERSATION } from '../conversation';
import type { LabelledPrompt } from './dataset';
import { LABELS, type Label } from '../labels';
import type { GatekeeperResult, GatekeeperStatus } from '../result';

/** Per-label scores, as precision and recall over the gatekeeper's decisions. */
export type LabelScores = { label: Label; precision: number; recall: number; f1: number; support: number };

export type EvaluationReport = {
  examples: number;
  accuracy: number;
  macroF1: number;
  perLabel: LabelScores[];
  /** confusion[actual][predicted], both in LABELS order. */
  confusion: number[][];
  statuses: Record<GatekeeperStatus, number>;
  /** Of the multi-intent prompts called MULTI_INTENT, the share whose intents were all found, and nothing else. */
  multiIntentExactMatch: number;
  /** Of single-intent prompts, the share that went straight to the LLM (CLEAR with the right intent). */
  clearAndRight: number;
  /**
   * Of single-intent (clear) prompts, the share stopped before the model: any status but CLEAR.
   * The costliest error: the developer asked something answerable and got a question back.
   */
  blockedClear: number;
};

/** Classifies a prompt with the context it was sent with. */
export type ClassifyWithContext = (prompt: string, context: GatekeeperContext) => GatekeeperResult;

/**
 * The label a decision amounts to: the intent for CLEAR and NEEDS_CONFIRMATION, VAGUE for
 * NEEDS_CLARIFICATION, MULTI for MULTI_INTENT. A clear prompt the model is unsure of therefore
 * counts as a miss, as it costs the developer a question. The nine labels have no class for a
 * conversational turn or an unread prompt: both ask nothing the labels name, so they count as
 * VAGUE ("Um hello please" is labelled so).
 */
export function decidedLabel(result: GatekeeperResult): Label {
  if (result.status === 'MULTI_INTENT') return 'MULTI';
  if (result.status === 'NEEDS_CLARIFICATION' || result.intent === null || result.intent === CONVERSATION) return 'VAGUE';
  return result.intent;
}

const ratio = (numerator: number, denominator: number) => (denominator === 0 ? 0 : numerator / denominator);

/** Scores decisions on labelled prompts, each classified with the context its record marks. */
export function evaluateGatekeeper(classify: ClassifyWithContext, prompts: readonly LabelledPrompt[]): EvaluationReport {
  const confusion = LABELS.map(() => LABELS.map(() => 0));
  const statuses: Record<GatekeeperStatus, number> = { CLEAR: 0, NEEDS_CONFIRMATION: 0, NEEDS_CLARIFICATION: 0, MULTI_INTENT: 0 };
  let multiFound = 0;
  let multiExact = 0;
  let single = 0;
  let clearAndRight = 0;
  let blocked = 0;
  for (const prompt of prompts) {
    const result = classify(prompt.text, contextOfRecord(prompt.context));
    const predicted = decidedLabel(result);
    confusion[LABELS.indexOf(prompt.label)][LABELS.indexOf(predicted)]++;
    statuses[result.status]++;
    if (prompt.label === 'MULTI' && predicted === 'MULTI') {
      multiFound++;
      const found = new Set<string>(result.intents.map((detected) => detected.intent));
      if (found.size === prompt.intents!.length && prompt.intents!.every((intent) => found.has(intent))) multiExact++;
    }
    if (prompt.label !== 'MULTI' && prompt.label !== 'VAGUE') {
      single++;
      if (result.status === 'CLEAR' && result.intent === prompt.label) clearAndRight++;
      if (result.status !== 'CLEAR') blocked++;
    }
  }
  const perLabel = LABELS.map((label, index) => {
    const truePositives = confusion[index][index];
    const predicted = confusion.reduce((sum, row) => sum + row[index], 0);
    const support = confusion[index].reduce((sum, count) => sum + count, 0);
    const precision = ratio(truePositives, predicted);
    const recall = ratio(truePositives, support);
    return { label, precision, recall, f1: ratio(2 * precision * recall, precision + recall), support };
  });
  const present = perLabel.filter((scores) => scores.support > 0);
  const correct = LABELS.reduce((sum, _, index) => sum + confusion[index][index], 0);
  return {
    examples: prompts.length,
    accuracy: ratio(correct, prompts.length),
    macroF1: ratio(
      present.reduce((sum, scores) => sum + scores.f1, 0),
      present.length,
    ),
    perLabel,
    confusion,
    statuses,
    multiIntentExactMatch: ratio(multiExact, multiFound),
    clearAndRight: ratio(clearAndRight, single),
    blockedClear: ratio(blocked, single),
  };
}

const SHORT: Readonly<Record<Label, string>> = {
  EXPLAIN_CODE: 'EXPL',
  GENERATE_CODE: 'GEN',
  FIX_CODE: 'FIX',
  REFACTOR_CODE: 'REFAC',
  WRITE_TESTS: 'TEST',
  CODEBASE_SEARCH: 'SRCH',
  GENERAL_QUESTION: 'GENQ',
  VAGUE: 'VAGUE',
  MULTI: 'MULTI',
};

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;

/** A plain-text report: per-label table, overall scores, statuses and the confusion matrix. */
export function formatReport(report: EvaluationReport): string {
  const lines: string[] = [];
  lines.push(`${'label'.padEnd(18)}${'precision'.padStart(10)}${'recall'.padStart(10)}${'f1'.padStart(10)}${'support'.padStart(9)}`);
  for (const scores of report.perLabel) {
    lines.push(
      `${scores.label.padEnd(18)}${percent(scores.precision).padStart(10)}${percent(scores.recall).padStart(10)}` +
        `${percent(scores.f1).padStart(10)}${String(scores.support).padStart(9)}`,
    );
  }
  lines.push('');
  lines.push(`examples ${report.examples}   accuracy ${percent(report.accuracy)}   macro-F1 ${percent(report.macroF1)}`);
  lines.push(
    `single-intent prompts CLEAR with the right intent: ${percent(report.clearAndRight)}   blocked (not CLEAR): ` +
      `${percent(report.blockedClear)}`,
  );
  lines.push(`multi-intent prompts with exactly the right intents: ${percent(report.multiIntentExactMatch)}`);
  lines.push('');
  lines.push(
    `statuses: ${Object.entries(report.statuses)
      .map(([status, count]) => `${status} ${count} (${percent(count / Math.max(1, report.examples))})`)
      .join(', ')}`,
  );
  lines.push('');
  lines.push('confusion (rows: actual, columns: decided)');
  lines.push(`${''.padEnd(7)}${LABELS.map((label) => SHORT[label].padStart(6)).join('')}`);
  report.confusion.forEach((row, index) => {
    lines.push(`${SHORT[LABELS[index]].padEnd(7)}${row.map((count) => String(count).padStart(6)).join('')}`);
  });
  return lines.join('\n');
}

/** One line of the summary table: blocked-clear, accuracy and macro-F1 of a set of prompts. */
export function formatSummaryRow(name: string, report: EvaluationReport): string {
  return (
    `${name.padEnd(44)}${String(report.examples).padStart(6)}${percent(report.blockedClear).padStart(15)}` +
    `${percent(report.accuracy).padStart(10)}${percent(report.macroF1).padStart(10)}`
  );
}

export const SUMMARY_HEADER =
  `${'prompts'.padEnd(44)}${'count'.padStart(6)}${'blocked-clear'.padStart(15)}${'accuracy'.padStart(10)}` + `${'macro-F1'.padStart(10)}`;
