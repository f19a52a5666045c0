import { MODEL_FILE } from './files';
import type { LinearModel } from './linear-model';

/** Settings of the gatekeeper; every field has a default, so `{}` is a valid value. */
export type GatekeeperOptions = {
  /** Model file to load. Default: data/gatekeeper/model.json in the checkout. */
  modelPath: string;
  /** An already-loaded model; takes precedence over `modelPath`. Default: none. */
  model?: LinearModel;
  /**
   * A single intent above this confidence is CLEAR. Confidences of a prompt that is not
   * MULTI_INTENT are taken with the MULTI probability given back to the other classes. Default
   * 0.35: the operating point chosen on the held-out split so that at most 2% of clear prompts
   * are stopped (`npm run eval:gatekeeper` prints it); a stopped clear question costs more than a
   * vague one that reaches the model.
   */
  clearThreshold: number;
  /** A single intent from this confidence up to `clearThreshold` NEEDS_CONFIRMATION; below it, NEEDS_CLARIFICATION. Default 0.3. */
  confirmThreshold: number;
  /**
   * A prompt whose likeliest class is VAGUE needs clarification only when the VAGUE probability
   * also reaches this; below it the likeliest intent decides (a doubtful prompt reaches the
   * model rather than a clear one being stopped). Default 0.5, chosen with `clearThreshold`.
   */
  vagueThreshold: number;
  /**
   * With context (selected text, current file, a repository or directory item) a single-intent
   * prompt is CLEAR when its best intent holds at least this share of the intent probabilities,
   * VAGUE and MULTI left out (see `decideWithContext` in classifier.ts). Above 1 turns the
   * context rule off. Default 0.75, chosen on the hand-written prompts with context in the
   * training split (the text model never sees them; best accuracy with at most 2% of clear ones
   * stopped): contentless prompts like "hmm", "??" or "help" score about 0.25 to 0.71, "whats
   * wrong here" or "make it better" 0.77 to 1.
   */
  contextShareThreshold: number;
  /** The model's multi-intent probability from which a prompt is MULTI_INTENT on its own. Default 0.8 (chosen with `clearThreshold`). */
  multiIntentThreshold: number;
  /**
   * A part of the prompt counts as a request of its own when its best intent reaches this
   * confidence (scored on the part alone). Default 0.7.
   */
  partThreshold: number;
  /**
   * When two parts hold different confident intents, the whole prompt's multi-intent probability
   * must still reach this for MULTI_INTENT, so "write a function that reads a file and returns
   * its lines" is not split in two. Default 0.15.
   */
  multiIntentSupport: number;
  /** At most this many alternatives are returned. Default 3. */
  maxAlternatives: number;
  /** Alternatives below this confidence are left out. Default 0.05. */
  minAlternativeConfidence: number;
  /** Results kept in the LRU cache; 0 turns the cache off. Default 1000. */
  cacheSize: number;
};

export const DEFAULT_GATEKEEPER_OPTIONS: Readonly<GatekeeperOptions> = Object.freeze({
  modelPath: MODEL_FILE,
  clearThreshold: 0.35,
  confirmThreshold: 0.3,
  vagueThreshold: 0.5,
  contextShareThreshold: 0.75,
  multiIntentThreshold: 0.8,
  partThreshold: 0.7,
  multiIntentSupport: 0.15,
  maxAlternatives: 3,
  minAlternativeConfidence: 0.05,
  cacheSize: 1000,
});

/** Fills in defaults and refuses settings that would make the statuses meaningless. */
export function resolveOptions(options: Partial<GatekeeperOptions> = {}): Readonly<GatekeeperOptions> {
  const resolved = { ...DEFAULT_GATEKEEPER_OPTIONS, ...options };
  const probabilities = [
    'clearThreshold',
    'confirmThreshold',
    'vagueThreshold',
    'multiIntentThreshold',
    'partThreshold',
    'multiIntentSupport',
    'minAlternativeConfidence',
  ] as const;
  for (const name of probabilities) {
    const value = resolved[name];
    if (!(value >= 0 && value <= 1)) throw new RangeError(`gatekeeper option ${name} must be between 0 and 1, got ${value}`);
  }
  if (resolved.confirmThreshold > resolved.clearThreshold) {
    throw new RangeError(
      `gatekeeper confirmThreshold (${resolved.confirmThreshold}) must not exceed clearThreshold (${resolved.clearThreshold})`,
    );
  }
  if (!(resolved.contextShareThreshold >= 0))
    throw new RangeError(`gatekeeper option contextShareThreshold must be >= 0, got ${resolved.contextShareThreshold}`);
  for (const name of ['maxAlternatives', 'cacheSize'] as const) {
    if (!Number.isInteger(resolved[name]) || resolved[name] < 0)
      throw new RangeError(`gatekeeper option ${name} must be a whole number >= 0`);
  }
  return Object.freeze(resolved);
}
