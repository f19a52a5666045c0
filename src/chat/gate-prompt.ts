import type { GatekeeperContext } from '../gatekeeper/context';
import type { ContextItem } from './context-items';
import { markdownText } from './markdown-text';

/** What the gatekeeper (src/gatekeeper) says of a prompt, as the chat uses it. */
export type GatekeeperVerdict = {
  status: 'CLEAR' | 'NEEDS_CONFIRMATION' | 'NEEDS_CLARIFICATION' | 'MULTI_INTENT';
  intent: string | null;
  confidence: number;
  intents: Array<{ intent: string; text?: string | null }>;
  alternatives: Array<{ intent: string; confidence: number }>;
};

/** Judges a prompt with what it was sent with; without a context, as sent with nothing attached. */
export type PromptChecker = (prompt: string, context?: GatekeeperContext) => GatekeeperVerdict;

/**
 * What a chat request gives its prompt to point at: selected code (`currentFile.selectedText` or a
 * SNIPPET item), a file (`currentFile`, or a FILE item), a codebase (a REPOSITORY or DIRECTORY item).
 */
export function gatekeeperContextOf(
  currentFile: { fileName: string; selectedText: string; contentAboveCursor?: string | null; contentBelowCursor?: string | null } | null,
  items: readonly Pick<ContextItem, 'category'>[],
): GatekeeperContext {
  const has = (...categories: string[]) => items.some((item) => categories.includes(item.category));
  return {
    selectedText: (currentFile?.selectedText.trim().length ?? 0) > 0 || has('snippet'),
    currentFile:
      (currentFile !== null &&
        (currentFile.fileName.trim().length > 0 ||
          Boolean(currentFile.contentAboveCursor?.trim() || currentFile.contentBelowCursor?.trim()))) ||
      has('file'),
    codebase: has('repository', 'directory'),
  };
}

const CONFIRMATIONS =
  /^(y|yes|yep|yeah|sure|ok|okay|confirm|confirmed|go ahead|do it|please do|yes please|correct|that's right|right)[.! ]*$/i;

/** A short reply that confirms what the assistant asked about. */
export function isConfirmation(text: string): boolean {
  return CONFIRMATIONS.test(text.trim());
}

const INTENT_WORDS: Record<string, string> = {
  EXPLAIN_CODE: 'explain code',
  GENERATE_CODE: 'write new code',
  FIX_CODE: 'fix a problem in code',
  REFACTOR_CODE: 'refactor code',
  WRITE_TESTS: 'write tests',
  CODEBASE_SEARCH: 'find something in this repository',
  GENERAL_QUESTION: 'answer a general question',
};

export const describeIntent = (intent: string | null) =>
  intent ? (INTENT_WORDS[intent] ?? intent.toLowerCase().replace(/_/g, ' ')) : 'help';

/** The assistant's immediate answer when the gatekeeper stops a prompt before the model. */
export function gateAnswer(verdict: GatekeeperVerdict): string | null {
  switch (verdict.status) {
    case 'NEEDS_CLARIFICATION':
      return (
        "I'm not sure what you would like me to do. Could you say a bit more: which code (select it or attach the file), and what " +
        'should happen (explain it, fix an error, write tests, refactor, or write something new)?'
      );
    case 'MULTI_INTENT': {
      const parts = verdict.intents.map(
        (part, index) => `${index + 1}. ${markdownText(part.text ?? '') || describeIntent(part.intent)} (${describeIntent(part.intent)})`,
      );
      return (
        `Your message asks for ${verdict.intents.length} different things:\n\n${parts.join('\n')}\n\nI give better answers one at a ` +
        `time: please send them as separate messages, starting with the first.`
      );
    }
    case 'NEEDS_CONFIRMATION': {
      const others = verdict.alternatives.slice(0, 2).map((alternative) => describeIntent(alternative.intent));
      return (
        `Just to check: would you like me to ` +
        `${describeIntent(verdict.intent)}?${others.length ? ` (Or did you mean: ${others.join(', or ')}?)` : ''} Reply "yes" to go ` +
        `ahead, or rephrase your question.`
      );
    }
    default:
      return null;
  }
}
