import type { CONVERSATION } from './conversation';
import type { Intent } from './labels';

/**
 * What stage 1 decides. Only CLEAR goes straight to the LLM; the others ask the developer first.
 * - `CLEAR`: one intent, confidence above `clearThreshold`.
 * - `NEEDS_CONFIRMATION`: one intent, confidence from `confirmThreshold` to `clearThreshold`;
 *   `alternatives` holds the runners-up to offer.
 * - `NEEDS_CLARIFICATION`: too vague to act on, or no intent reaches `confirmThreshold`.
 * - `MULTI_INTENT`: two or more different requests; `intents` lists them.
 */
export type GatekeeperStatus = 'CLEAR' | 'NEEDS_CONFIRMATION' | 'NEEDS_CLARIFICATION' | 'MULTI_INTENT';

export type IntentScore = {
  intent: Intent;
  /** Calibrated probability, 0 to 1. */
  confidence: number;
};

/**
 * An intent of a verdict: one of the seven, or `CONVERSATION` for a greeting, thanks, a farewell
 * or a question about the assistant (answered briefly; nothing is asked of the code).
 */
export type VerdictIntent = Intent | typeof CONVERSATION;

export type DetectedIntent = {
  intent: VerdictIntent;
  /** Calibrated probability, 0 to 1 (1 for a conversational turn). */
  confidence: number;
  /** The part of the prompt this request came from; null when it is the whole prompt or no part was found. */
  text: string | null;
};

/** Frozen, and shared between callers through the cache: do not mutate. */
export type GatekeeperResult = {
  status: GatekeeperStatus;
  /**
   * The intent to act on for CLEAR and NEEDS_CONFIRMATION; null otherwise, and for a CLEAR prompt
   * the gatekeeper could not read (another language): the model reads it as it is.
   */
  intent: VerdictIntent | null;
  /**
   * For single-intent statuses and NEEDS_CLARIFICATION, the probability of the most likely intent;
   * for MULTI_INTENT, the model's probability that the prompt holds several requests (or, when
   * the parts decided it, the lowest confidence among them).
   */
  confidence: number;
  /** Every request found: one for CLEAR and NEEDS_CONFIRMATION, several for MULTI_INTENT, none otherwise. */
  intents: readonly DetectedIntent[];
  /** Next most likely intents, best first, for NEEDS_CONFIRMATION and NEEDS_CLARIFICATION; empty otherwise. */
  alternatives: readonly IntentScore[];
};

/** Freezes a result and everything in it: results are shared through the cache. */
export function freeze(result: GatekeeperResult): GatekeeperResult {
  for (const intent of result.intents) Object.freeze(intent);
  for (const alternative of result.alternatives) Object.freeze(alternative);
  Object.freeze(result.intents);
  Object.freeze(result.alternatives);
  return Object.freeze(result);
}

/** A CLEAR verdict for one intent (null: not read, the model reads the prompt as it is). */
export const clearResult = (intent: VerdictIntent | null, confidence: number): GatekeeperResult =>
  freeze({
    status: 'CLEAR',
    intent,
    confidence,
    intents: intent === null ? [] : [{ intent, confidence, text: null }],
    alternatives: [],
  });
