import type { Config } from '../config';
import { loadGatekeeper } from '../gatekeeper/load-gatekeeper';
import type { PromptChecker } from './gate-prompt';

/** The trained gatekeeper (src/gatekeeper), loaded once, as the chat's PromptChecker. */
export function createPromptChecker(config: Pick<Config, 'gatekeeper'>): PromptChecker {
  // Unset thresholds keep the gatekeeper's own operating point (src/gatekeeper/options.ts).
  const { clearThreshold, confirmThreshold } = config.gatekeeper;
  const gatekeeper = loadGatekeeper({
    ...(clearThreshold === undefined ? {} : { clearThreshold }),
    ...(confirmThreshold === undefined ? {} : { confirmThreshold }),
  });
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
