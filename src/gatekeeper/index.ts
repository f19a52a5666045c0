/**
 * Stage 1 of the chat pipeline: a trained classifier that decides, before any LLM call, whether a
 * prompt is clear, needs confirming or clarifying, or asks for several things. See README.md.
 */
export { loadGatekeeper, type Gatekeeper } from './load-gatekeeper';
export { DEFAULT_GATEKEEPER_OPTIONS, type GatekeeperOptions } from './options';
export type { DetectedIntent, GatekeeperResult, GatekeeperStatus, IntentScore } from './result';
export { INTENTS, type Intent } from './labels';
