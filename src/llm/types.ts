/**
 * The one streaming interface every chat model provider implements. Providers speak their own wire
 * format (OpenAI-compatible chat completions, Anthropic Messages) and yield the same events.
 */
export type LlmMessage = { role: 'system' | 'user' | 'assistant'; content: string };

export type LlmRequest = {
  messages: LlmMessage[];
  /** Default: the provider's (Anthropic needs one: 2048). */
  maxTokens?: number;
  /** Default: the provider's. */
  temperature?: number;
  /** Aborting stops the HTTP request and the stream, and makes it throw an LlmError of kind 'aborted'. */
  signal?: AbortSignal;
};

/** What a provider streams: new text as it arrives, then one finish. Errors are thrown as LlmError. */
export type LlmStreamEvent =
  | { type: 'text-delta'; text: string }
  | { type: 'finish'; reason: 'stop' | 'length' | 'other'; usage?: { inputTokens?: number; outputTokens?: number } };

export type LlmErrorKind = 'timeout' | 'connection' | 'http' | 'stream' | 'prompt_too_long' | 'aborted';

export type LlmErrorOptions = {
  kind: LlmErrorKind;
  message: string;
  /** HTTP status when the provider answered with an error status. */
  status?: number;
  /** From a Retry-After header (seconds or a date), in milliseconds. */
  retryAfterMs?: number;
  cause?: unknown;
};

/** Retryable: timeouts, connection failures, and HTTP 408, 409, 429 and 5xx. */
export class LlmError extends Error {
  readonly kind: LlmErrorKind;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(options: LlmErrorOptions) {
    super(options.message, { cause: options.cause });
    this.name = 'LlmError';
    this.kind = options.kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }

  get isRetryable(): boolean {
    if (this.kind === 'timeout' || this.kind === 'connection') return true;
    if (this.kind !== 'http' || this.status === undefined) return false;
    return this.status === 408 || this.status === 409 || this.status === 429 || this.status >= 500;
  }
}

export interface LlmProvider {
  /** e.g. "openai", "anthropic". */
  readonly name: string;
  readonly model: string;
  stream(request: LlmRequest): AsyncIterable<LlmStreamEvent>;
}
