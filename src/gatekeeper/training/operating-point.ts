import { createClassifier } from '../classifier';
import { isHandWritten, type LabelledPrompt } from './dataset';
import { evaluateGatekeeper, type EvaluationReport } from './evaluate-gatekeeper';
import type { LinearModel } from '../linear-model';
import { resolveOptions, type GatekeeperOptions } from '../options';

/** The costliest error is a clear prompt stopped before the model: at most this share of them. */
export const MAX_BLOCKED_CLEAR = 0.02;

/** Thresholds the operating point is chosen among. */
export const CLEAR_THRESHOLDS = [0.3, 0.35, 0.4, 0.5, 0.65, 0.85] as const;
export const MULTI_INTENT_THRESHOLDS = [0.5, 0.7, 0.8, 0.9] as const;
/** 0: a prompt needs clarification whenever VAGUE is its likeliest class. */
export const VAGUE_THRESHOLDS = [0, 0.5, 0.65, 0.8] as const;

export type OperatingPoint = {
  clearThreshold: number;
  multiIntentThreshold: number;
  vagueThreshold: number;
  /** Hand-written prompts sent without context: the number tuned for. */
  handWritten: EvaluationReport;
  generated: EvaluationReport;
  /** Both blocked-clear rates within MAX_BLOCKED_CLEAR. */
  admissible: boolean;
};

/** Among equally accurate points: higher clear threshold, then lower vague and multi-intent thresholds. */
function preferredOnTie(point: OperatingPoint, chosen: OperatingPoint): boolean {
  if (point.clearThreshold !== chosen.clearThreshold) return point.clearThreshold > chosen.clearThreshold;
  if (point.vagueThreshold !== chosen.vagueThreshold) return point.vagueThreshold < chosen.vagueThreshold;
  return point.multiIntentThreshold < chosen.multiIntentThreshold;
}

/**
 * Scores every combination of thresholds on the given (held-out) prompts sent without context, and picks
 * the admissible one with the best hand-written accuracy; ties go to the higher clear threshold
 * and the lower vague threshold (fewer vague prompts through), then the lower multi-intent
 * threshold (more multi-part prompts split). `confirmThreshold` follows as the smaller of 0.3 and the clear
 * threshold. Returns every point and the chosen one (null when none is admissible).
 */
export function sweepOperatingPoints(
  model: LinearModel,
  prompts: readonly LabelledPrompt[],
  base: Partial<GatekeeperOptions> = {},
): { points: OperatingPoint[]; chosen: OperatingPoint | null } {
  const alone = prompts.filter((prompt) => prompt.context === 'none');
  const handWritten = alone.filter(isHandWritten);
  const generated = alone.filter((prompt) => !isHandWritten(prompt));
  const points: OperatingPoint[] = [];
  for (const clearThreshold of CLEAR_THRESHOLDS) {
    for (const multiIntentThreshold of MULTI_INTENT_THRESHOLDS) {
      for (const vagueThreshold of VAGUE_THRESHOLDS) {
        const settings = {
          ...base,
          clearThreshold,
          confirmThreshold: Math.min(0.3, clearThreshold),
          multiIntentThreshold,
          vagueThreshold,
          cacheSize: 0,
        };
        const classify = createClassifier(model, resolveOptions(settings));
        const hand = evaluateGatekeeper(classify, handWritten);
        const gen = evaluateGatekeeper(classify, generated);
        const admissible = hand.blockedClear <= MAX_BLOCKED_CLEAR && gen.blockedClear <= MAX_BLOCKED_CLEAR;
        points.push({ clearThreshold, multiIntentThreshold, vagueThreshold, handWritten: hand, generated: gen, admissible });
      }
    }
  }
  let chosen: OperatingPoint | null = null;
  for (const point of points) {
    if (!point.admissible) continue;
    const better =
      chosen === null ||
      point.handWritten.accuracy > chosen.handWritten.accuracy ||
      (point.handWritten.accuracy === chosen.handWritten.accuracy && preferredOnTie(point, chosen));
    if (better) chosen = point;
  }
  return { points, chosen };
}
