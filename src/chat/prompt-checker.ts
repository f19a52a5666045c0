import type { Config } from '../config';
import { loadGatekeeper, type Gatekeeper } from '../gatekeeper/load-gatekeeper';
import type { PromptChecker } from './gate-prompt';

/**
 * The trained gatekeeper (src/gatekeeper) as the chat's PromptChecker, loaded on the first prompt
 * it checks: a service nobody chats with never holds the model in memory.
 */
export function createPromptChecker(config: Pick<Config, 'gatekeeper'>): PromptChecker {
  // Unset thresholds keep the gatekeeper's own operating point (src/gatekeeper/options.ts).
  const { clearThreshold, confirmThreshold } = config.gatekeeper;
  let gatekeeper: Gatekeeper | null = null;
  return (prompt, context) => {
    gatekeeper ??= loadGatekeeper({
      ...(clearThreshold === undefined ? {} : { clearThreshold }),
      ...(confirmThreshold === undefined ? {} : { confirmThreshold }),
    });
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
