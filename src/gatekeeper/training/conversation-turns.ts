import { readFileSync } from 'node:fs';
import path from 'node:path';
import { NO_CONTEXT, type GatekeeperContext, type ThreadTurn } from '../context';
import { CONVERSATION } from '../conversation';
import { GATEKEEPER_DATA_DIR } from '../files';
import { isIntent } from '../labels';
import type { GatekeeperResult } from '../result';

/** Hand-written conversational turns and follow-ups with the conversation before them (data/gatekeeper/README.md). */
export const CONVERSATION_TURNS_FILE = path.join(GATEKEEPER_DATA_DIR, 'conversations', 'turns.jsonl');

/** One line of the file: what the right verdict is for a message sent after `history`. */
export type ConversationTurn = {
  text: string;
  /** `CONVERSATION`, the intent a follow-up carries, or `VAGUE` (must still be asked to clarify). */
  label: string;
  /** greeting, thanks, farewell, about-assistant, follow-up, correction, other-language or vague. */
  kind: string;
  language: string;
  history: ThreadTurn[];
};

export function parseConversationTurns(content: string, source: string): ConversationTurn[] {
  return content
    .split('\n')
    .map((line, index) => ({ line, where: `${source}:${index + 1}` }))
    .filter(({ line }) => line.trim().length > 0)
    .map(({ line, where }) => {
      const record = JSON.parse(line) as Partial<ConversationTurn>;
      if (typeof record.text !== 'string' || !record.text.trim()) throw new Error(`${where}: text must be a non-empty string`);
      const label = record.label;
      if (label !== CONVERSATION && label !== 'VAGUE' && !isIntent(label)) throw new Error(`${where}: unknown label ${String(label)}`);
      const history = record.history ?? [];
      if (!history.every((turn) => (turn.role === 'user' || turn.role === 'assistant') && typeof turn.content === 'string'))
        throw new Error(`${where}: history holds {role: user | assistant, content} turns`);
      return { text: record.text, label, kind: String(record.kind), language: String(record.language), history };
    });
}

export const readConversationTurns = (file = CONVERSATION_TURNS_FILE) =>
  parseConversationTurns(readFileSync(file, 'utf8'), path.basename(file));

/** Figures for a set of turns: `answerable` are those not labelled VAGUE. */
export type TurnFigures = {
  turns: number;
  answerable: number;
  /** Answerable turns the gatekeeper sent on (CLEAR): to the model, or the short answer without one. */
  answered: number;
  /** Answerable turns asked to clarify (NEEDS_CLARIFICATION): what the issue is about. */
  askedToClarify: number;
  /** Turns labelled CONVERSATION, and those of them recognised as such. */
  conversational: number;
  recognised: number;
  /** Follow-ups and corrections (labelled with an intent), and those CLEAR with that intent. */
  withIntent: number;
  rightIntent: number;
  /** Turns labelled VAGUE, and those still asked to clarify. */
  vague: number;
  vagueAsked: number;
};

export type TurnReport = { all: TurnFigures; byKind: Array<[string, TurnFigures]> };

/** Classifies each turn with its history as the thread and scores the verdicts. */
export function evaluateConversationTurns(
  classify: (prompt: string, context: GatekeeperContext) => GatekeeperResult,
  turns: readonly ConversationTurn[],
): TurnReport {
  const empty = (): TurnFigures => ({
    turns: 0,
    answerable: 0,
    answered: 0,
    askedToClarify: 0,
    conversational: 0,
    recognised: 0,
    withIntent: 0,
    rightIntent: 0,
    vague: 0,
    vagueAsked: 0,
  });
  const all = empty();
  const byKind = new Map<string, TurnFigures>();
  for (const turn of turns) {
    const result = classify(turn.text, { ...NO_CONTEXT, thread: turn.history });
    const kind = byKind.get(turn.kind) ?? empty();
    byKind.set(turn.kind, kind);
    for (const figures of [all, kind]) {
      figures.turns++;
      if (turn.label === 'VAGUE') {
        figures.vague++;
        if (result.status === 'NEEDS_CLARIFICATION') figures.vagueAsked++;
        continue;
      }
      figures.answerable++;
      if (result.status === 'CLEAR') figures.answered++;
      if (result.status === 'NEEDS_CLARIFICATION') figures.askedToClarify++;
      if (turn.label === CONVERSATION) {
        figures.conversational++;
        if (result.status === 'CLEAR' && result.intent === CONVERSATION) figures.recognised++;
      } else {
        figures.withIntent++;
        if (result.status === 'CLEAR' && result.intent === turn.label) figures.rightIntent++;
      }
    }
  }
  return { all, byKind: [...byKind.entries()] };
}

const share = (part: number, whole: number) => (whole === 0 ? '-' : `${part}/${whole} (${((part / whole) * 100).toFixed(1)}%)`);

export function formatTurnReport(report: TurnReport): string {
  const columns = ['kind', 'turns', 'answered', 'asked to clarify', 'recognised as conversation', 'right intent', 'vague still asked'];
  const widths = [16, 6, 18, 18, 28, 18, 18];
  const row = (cells: string[]) =>
    cells.map((cell, index) => (index === 0 ? cell.padEnd(widths[0]) : cell.padStart(widths[index]))).join('');
  const cells = (name: string, figures: TurnFigures) => [
    name,
    String(figures.turns),
    share(figures.answered, figures.answerable),
    share(figures.askedToClarify, figures.answerable),
    share(figures.recognised, figures.conversational),
    share(figures.rightIntent, figures.withIntent),
    share(figures.vagueAsked, figures.vague),
  ];
  return [row(columns), ...report.byKind.map(([kind, figures]) => row(cells(kind, figures))), row(cells('all', report.all))].join('\n');
}
