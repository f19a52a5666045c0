import { LlmError, type LlmProvider, type LlmRequest, type LlmStreamEvent } from './types';
import { retryDelay, sleep } from './retry-delay';
import { countLlmRetry } from '../metrics/record';

export type RetryInfo = {
  /** 1 for the first retry. */
  attempt: number;
  /** The failure that is being retried. */
  error: LlmError;
  /** How long we wait before the retry. */
  delayMs: number;
};

export type StreamWithRetryOptions = {
  provider: LlmProvider;
  request: LlmRequest;
  /** Retries after the first attempt; 0 means a single attempt. */
  maxRetries: number;
  /** The first backoff, doubled on each retry, before jitter. Default: 500 ms. */
  baseDelayMs?: number;
  /** No wait is longer, not even one a Retry-After asks for. Default: 8000 ms. */
  maxDelayMs?: number;
  /** Called before each wait, e.g. to log the retry. */
  onRetry?: (info: RetryInfo) => void;
};

/**
 * Streams from the provider, retrying retryable failures (see LlmError.isRetryable) as long as no
 * text has reached the caller: once it has, a retry would repeat it, so the error is thrown as is.
 */
export async function* streamWithRetry(options: StreamWithRetryOptions): AsyncGenerator<LlmStreamEvent> {
  const { provider, request, maxRetries } = options;
  for (let attempt = 0; ; attempt += 1) {
    let textYielded = false;
    try {
      for await (const event of provider.stream(request)) {
        if (event.type === 'text-delta') textYielded = true;
        yield event;
      }
      return;
    } catch (error) {
      if (!(error instanceof LlmError) || textYielded || !error.isRetryable || attempt >= maxRetries || request.signal?.aborted)
        throw error;
      const delayMs = retryDelay({ attempt, error, baseDelayMs: options.baseDelayMs ?? 500, maxDelayMs: options.maxDelayMs ?? 8000 });
      countLlmRetry(provider.name, error);
      options.onRetry?.({ attempt: attempt + 1, error, delayMs });
      await sleep(delayMs, request.signal);
    }
  }
}
