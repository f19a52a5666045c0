/** How a suggestion stands: the client shows STREAMING and COMPLETE text, and removes what it shows on SUPERSEDED and EMPTY. */
export type SuggestionStatus = 'STREAMING' | 'COMPLETE' | 'SUPERSEDED' | 'EMPTY';

/** One event of codeSuggestionUpdates: always a complete copy of the latest suggestion, never a delta. */
export type CodeSuggestionUpdateEvent = {
  sessionId: string;
  suggestionId: string;
  /** The session revision (update count) the suggestion was made for. */
  revision: number;
  /** `completion` or `generation`; null when superseded before the decision was made. */
  intent: string | null;
  generationType: string | null;
  text: string;
  status: SuggestionStatus;
  /** Why an EMPTY update holds no suggestion; null otherwise. */
  reason: EmptyReason | null;
};

/**
 * `no_model`: no language model is configured; `failed`: the model or the generation failed (logged); `nothing`: it had nothing to add;
 * `rate_limited`: the user's code suggestions budget was spent, so none was started (updates are refused with RATE_LIMITED until
 * it refills).
 */
export type EmptyReason = 'no_model' | 'failed' | 'nothing' | 'rate_limited';

/** The event bus channel of one session's updates. */
