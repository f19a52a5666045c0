import type { Logger } from '../../logger';
import type { LlmProvider } from '../../llm/types';
import { stripFences } from '../build-suggestion-prompt';
import { suggest, type DetectIntent } from '../completions.service';
import type { CodeSuggestionUpdateEvent, EmptyReason } from './session-update';

/** The document state one generation is made for. */
export type SessionState = {
  /** The session's owner. */
  userId: number;
  fileName: string;
  projectPath: string | null;
  content: string;
  cursorOffset: number;
  revision: number;
};

/** Intent detection for a user's document (the user, for IntentThread's cooldown after a runaway). */
export type DetectIntentFor = (input: Parameters<DetectIntent>[0], userId: number) => ReturnType<DetectIntent>;

/** A completed suggestion, to keep with the state it was made for before COMPLETE is sent. */
export type CompletedSuggestion = {
  id: string;
  sessionId: string;
  state: SessionState;
  language: string | null;
  intent: string;
  generationType: string | null;
  text: string;
};

export type RunGenerationOptions = {
  sessionId: string;
  suggestionId: string;
  state: SessionState;
  llm: LlmProvider | null;
  maxRetries: number;
  detect: DetectIntentFor;
  /** Aborts when a newer update supersedes this generation: nothing is published after that. */
  signal: AbortSignal;
  publish: (update: CodeSuggestionUpdateEvent) => Promise<void>;
  store: (suggestion: CompletedSuggestion) => Promise<void>;
  logger: Logger;
};

/**
 * One generation for one session revision: intent as the completions endpoint decides it, then
 * STREAMING with the text so far after each piece, then COMPLETE, or EMPTY when the model had
 * nothing but whitespace (or failed). Every publish is checked against the signal first, so once
 * the runner has published SUPERSEDED (right after aborting) nothing more of this one follows.
 */
export async function runGeneration(options: RunGenerationOptions): Promise<void> {
  const { state, signal } = options;
  let intent: string | null = null;
  let generationType: string | null = null;
  const send = async (status: CodeSuggestionUpdateEvent['status'], text: string, reason: EmptyReason | null = null) => {
    if (signal.aborted) return;
    await options.publish({
      sessionId: options.sessionId,
      suggestionId: options.suggestionId,
      revision: state.revision,
      intent,
      generationType,
      text,
      status,
      reason,
    });
  };
  try {
    const suggestion = await suggest({
      request: {
        fileName: state.fileName,
        contentAboveCursor: state.content.slice(0, state.cursorOffset),
        contentBelowCursor: state.content.slice(state.cursorOffset),
        intent: null,
        generationType: null,
        userInstruction: null,
        stream: true,
        projectPath: state.projectPath,
        context: [],
      },
      llm: options.llm,
      maxRetries: options.maxRetries,
      detect: (input) => options.detect(input, state.userId),
      signal,
    });
    intent = suggestion.decision.intent;
    generationType = suggestion.decision.generationType;
    let text = '';
    if (suggestion.text) {
      for await (const piece of suggestion.text) {
        if (signal.aborted) return;
        text += piece;
        if (text.trim()) await send('STREAMING', text);
      }
    }
    const final = stripFences(text);
    if (signal.aborted) return;
    if (!final.trim()) return void (await send('EMPTY', '', suggestion.text ? 'nothing' : 'no_model'));
    await options.store({
      id: options.suggestionId,
      sessionId: options.sessionId,
      state,
      language: suggestion.model.lang || null,
      intent,
      generationType,
      text: final,
    });
    await send('COMPLETE', final);
  } catch (error) {
    if (signal.aborted) return;
    options.logger.warn(
      { event: 'code_suggestion_session_generation_failed', sessionId: options.sessionId, suggestionId: options.suggestionId, err: error },
      'code suggestion generation failed',
    );
    await send('EMPTY', '', 'failed').catch(() => undefined);
  }
}
