import { randomUUID } from 'node:crypto';
import { languageOf } from '../parsing/languages';
import { streamWithRetry } from '../llm/stream-with-retry';
import type { LlmProvider } from '../llm/types';
import { buildSuggestionPrompt, stripFences } from './build-suggestion-prompt';
import type { CompletionRequest } from './completion-request';
import { decideIntent, type DetectedIntent, type SuggestionIntent } from './decide-intent';

export type DetectIntent = (input: {
  fileName: string;
  contentAboveCursor: string;
  contentBelowCursor?: string;
}) => Promise<DetectedIntent>;

export type SuggestOptions = {
  request: CompletionRequest;
  llm: LlmProvider | null;
  maxRetries: number;
  detect: DetectIntent;
  signal?: AbortSignal;
};

export type Suggestion = {
  id: string;
  created: number;
  decision: SuggestionIntent;
  model: { engine: string; name: string; lang: string };
  /** The model's text as it streams; null when no model is configured. */
  text: AsyncIterable<string> | null;
};

/** Decides completion or generation and starts the model's answer; the route decides how to send it. */
export async function suggest(options: SuggestOptions): Promise<Suggestion> {
  const { request } = options;
  // Detection parses the file: only when the request leaves the decision to it.
  const decision = await decideIntent(request, () =>
    options.detect({
      fileName: request.fileName,
      contentAboveCursor: request.contentAboveCursor,
      contentBelowCursor: request.contentBelowCursor,
    }),
  );
  const language = languageOf(request.fileName);
  const model = { engine: options.llm?.name ?? 'none', name: options.llm?.model ?? 'none', lang: language ?? '' };
  const base = { id: randomUUID(), created: Math.floor(Date.now() / 1000), decision, model };
  if (!options.llm) return { ...base, text: null };
  const messages = buildSuggestionPrompt(request, decision, language);
  const stream = streamWithRetry({
    provider: options.llm,
    request: { messages, signal: options.signal, maxTokens: decision.intent === 'completion' ? 256 : 2048 },
    maxRetries: options.maxRetries,
  });
  return { ...base, text: textOf(stream) };
}

async function* textOf(stream: AsyncIterable<{ type: string; text?: string }>): AsyncGenerator<string> {
  for await (const event of stream) if (event.type === 'text-delta' && event.text) yield event.text;
}

/** The whole answer as GitLab's completions response. */
export async function collectSuggestion(suggestion: Suggestion) {
  let text = '';
  if (suggestion.text) for await (const piece of suggestion.text) text += piece;
  return {
    id: suggestion.id,
    model: suggestion.model,
    object: 'text_completion',
    created: suggestion.created,
    choices: suggestion.text ? [{ text: stripFences(text), index: 0, finish_reason: 'length' }] : [],
    intent: suggestion.decision.intent,
    generation_type: suggestion.decision.generationType,
  };
}
