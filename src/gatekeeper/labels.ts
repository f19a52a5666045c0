/**
 * What a developer can ask Duo Chat for. Stage 2 (the LLM) picks tools per intent, so these are
 * the only answers the gatekeeper gives for a clear prompt.
 */
export const INTENTS = [
  'EXPLAIN_CODE',
  'GENERATE_CODE',
  'FIX_CODE',
  'REFACTOR_CODE',
  'WRITE_TESTS',
  'CODEBASE_SEARCH',
  'GENERAL_QUESTION',
] as const;
export type Intent = (typeof INTENTS)[number];

/**
 * The classes the model scores: every intent, plus VAGUE (nothing to act on: "help", "fix it")
 * and MULTI (two or more different requests in one prompt).
 */
export const LABELS = [...INTENTS, 'VAGUE', 'MULTI'] as const;
export type Label = (typeof LABELS)[number];

export const VAGUE_INDEX = LABELS.indexOf('VAGUE');
export const MULTI_INDEX = LABELS.indexOf('MULTI');

export function isIntent(value: unknown): value is Intent {
  return (INTENTS as readonly unknown[]).includes(value);
}

export function isLabel(value: unknown): value is Label {
  return (LABELS as readonly unknown[]).includes(value);
}
