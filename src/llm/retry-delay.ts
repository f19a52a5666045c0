import { LlmError } from './types';

export type RetryDelayOptions = { attempt: number; error: LlmError; baseDelayMs: number; maxDelayMs: number };

/** Exponential backoff with "equal jitter" (half fixed, half random), so retries spread yet still back off. */
export function retryDelay({ attempt, error, baseDelayMs, maxDelayMs }: RetryDelayOptions): number {
  const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
  const jittered = Math.round(backoff / 2 + (Math.random() * backoff) / 2);
  return Math.min(maxDelayMs, Math.max(jittered, error.retryAfterMs ?? 0));
}

/** Waits, unless the signal aborts first (then rejects with an 'aborted' LlmError). */
export function sleep(delayMs: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () =>
      new LlmError({ kind: 'aborted', message: 'the request was aborted while waiting to retry', cause: signal?.reason });
    if (signal?.aborted) {
      reject(aborted());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
