/**
 * The held-out scores a shipped model must reach, set just under what the committed model scores
 * (see src/gatekeeper/README.md). `npm run eval:gatekeeper` and the tests fail below them, so a
 * worse retrain or a change to the features is caught in CI.
 * - accuracy and macro-F1: on the whole held-out split;
 * - hand-written accuracy and blocked-clear: on hand-written held-out prompts sent without
 *   context (the number tuned for), blocked-clear also on generated held-out prompts;
 * - repository reach: the clear repository questions (test/gatekeeper/fixtures) reaching the
 *   model with a REPOSITORY context item.
 */
export const QUALITY_BAR = Object.freeze({
  minAccuracy: 0.95,
  minMacroF1: 0.95,
  minHandWrittenAccuracy: 0.92,
  maxBlockedClear: 0.02,
  minRepositoryReach: 0.95,
});
