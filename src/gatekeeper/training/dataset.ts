import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fnv1a, seedFor } from '../hash';
import { isIntent, isLabel, type Intent, type Label } from '../labels';
import { PROMPT_CONTEXTS, type PromptContext } from '../context';

const isPromptContext = (value: unknown): value is PromptContext => (PROMPT_CONTEXTS as readonly unknown[]).includes(value);

/** One line of a data/gatekeeper/*.jsonl file. */
export type LabelledPrompt = {
  text: string;
  label: Label;
  /** For MULTI prompts: the intents asked for, in the order they appear. */
  intents?: Intent[];
  /** What the prompt was sent with; the label is the right verdict given it. */
  context: PromptContext;
  /** The file the prompt came from (e.g. `hand-written.jsonl`), so reports can tell sources apart. */
  source: string;
};

/** Share of prompts held out from training, by a stable hash of the prompt. */
export const HELD_OUT_PERCENT = 20;
const SPLIT_SEED = seedFor('gatekeeper-held-out-split');

/**
 * Case and whitespace do not make a new prompt: variants that differ only in them land in the
 * same split, so the held-out set does not contain near-copies of training prompts.
 */
export function normalizePrompt(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

export function isHeldOut(text: string): boolean {
  return fnv1a(normalizePrompt(text), SPLIT_SEED) % 100 < HELD_OUT_PERCENT;
}

/**
 * Files named `*.training.jsonl` are never held out: prompts written after looking at held-out
 * errors would otherwise leak what was learnt from them into the held-out score.
 */
export const isTrainingOnly = (prompt: LabelledPrompt) => prompt.source.endsWith('.training.jsonl');

export function splitDataset(prompts: readonly LabelledPrompt[]): { training: LabelledPrompt[]; heldOut: LabelledPrompt[] } {
  const training: LabelledPrompt[] = [];
  const heldOut: LabelledPrompt[] = [];
  for (const prompt of prompts) (isHeldOut(prompt.text) && !isTrainingOnly(prompt) ? heldOut : training).push(prompt);
  return { training, heldOut };
}

export function parseJsonl(content: string, source: string): LabelledPrompt[] {
  const prompts: LabelledPrompt[] = [];
  content.split('\n').forEach((line, index) => {
    if (line.trim().length === 0) return;
    const where = `${source}:${index + 1}`;
    let record: { text?: unknown; label?: unknown; intents?: unknown; context?: unknown };
    try {
      record = JSON.parse(line) as typeof record;
    } catch (error) {
      throw new Error(`${where}: not JSON`, { cause: error });
    }
    if (typeof record.text !== 'string' || record.text.trim().length === 0) throw new Error(`${where}: text must be a non-empty string`);
    if (!isLabel(record.label)) throw new Error(`${where}: unknown label ${String(record.label)}`);
    const context = record.context ?? 'none';
    if (!isPromptContext(context))
      throw new Error(`${where}: unknown context ${String(record.context)} (one of ${PROMPT_CONTEXTS.join(', ')})`);
    const prompt: LabelledPrompt = { text: record.text, label: record.label, context, source };
    if (record.label === 'MULTI') {
      const intents = record.intents;
      if (!Array.isArray(intents) || intents.length < 2 || !intents.every(isIntent) || new Set(intents).size !== intents.length) {
        throw new Error(`${where}: a MULTI prompt needs "intents": two or more different intents`);
      }
      prompt.intents = intents;
    }
    prompts.push(prompt);
  });
  return prompts;
}

/** Prompts written by people rather than the generator (hand-written*.jsonl). */
export const isHandWritten = (prompt: LabelledPrompt) => prompt.source.startsWith('hand-written');

/**
 * Reads every *.jsonl file in the folder, in name order. Duplicates (after normalising, with the
 * same context) are dropped; the same prompt and context with two labels is an error in the data.
 * "fix it" may be VAGUE alone and FIX_CODE with selected code.
 */
export function readDataset(directory: string): LabelledPrompt[] {
  const files = readdirSync(directory)
    .filter((name) => name.endsWith('.jsonl'))
    .sort();
  const seen = new Map<string, LabelledPrompt>();
  for (const file of files) {
    for (const prompt of parseJsonl(readFileSync(path.join(directory, file), 'utf8'), file)) {
      const key = `${prompt.context}\u0000${normalizePrompt(prompt.text)}`;
      const earlier = seen.get(key);
      if (earlier === undefined) seen.set(key, prompt);
      else if (earlier.label !== prompt.label) {
        throw new Error(
          `"${prompt.text.slice(0, 60)}" is ${earlier.label} in ${earlier.source} and ${prompt.label} in ${prompt.source} (context ` +
            `${prompt.context})`,
        );
      }
    }
  }
  return [...seen.values()];
}
