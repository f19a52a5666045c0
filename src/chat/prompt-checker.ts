import type { Config } from '../config';
import { loadGatekeeper } from '../gatekeeper/load-gatekeeper';
import type { PromptChecker } from './gate-prompt';

/** The trained gatekeeper (src/gatekeeper), loaded once, as the chat's PromptChecker. */
export function createPromptChecker(config: Pick<Config, 'gatekeeper'>): PromptChecker {
  const gatekeeper = loadGatekeeper({ clearThreshold: config.gatekeeper.clearThreshold, confirmThreshold: config.gatekeeper.confirmThreshold });
  return (prompt, context) => {
    const result = gatekeeper.classify(prompt, context);
    return {
      status: result.status,
      intent: result.intent,
      confidence: result.confidence,
      intents: result.intents.map((part) => ({ intent: part.intent, text: part.text })),
      alternatives: result.alternatives.map((alternative) => ({ intent: alternative.intent, confidence: alternative.confidence })),
    };
  };
}
