import { httpError } from '../provider-errors';
import { retryDelay, sleep } from '../retry-delay';
import { LlmError } from '../types';

export type PostRerankOptions = {
  /** For error messages: "reranker (cohere)". */
  providerName: string;
  url: string;
  apiKey: string | undefined;
  body: unknown;
  /** The limit on every attempt and wait together. */
  timeoutMs: number;
  /** Retries of retryable failures (408, 409, 429, 5xx, connection) while the time limit allows. */
  maxRetries: number;
  signal?: AbortSignal;
};

/**
 * POSTs a rerank request and returns the answer's parsed JSON. One time limit covers every attempt:
 * a search waits for its reranker this long at most, retries included, so a retry happens only
 * when its delay still fits.
 */
export async function postRerank(options: PostRerankOptions): Promise<unknown> {
  const deadline = Date.now() + options.timeoutMs;
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await attemptPost(options, signal, timeout);
    } catch (error) {
      if (!(error instanceof LlmError) || !error.isRetryable || attempt >= options.maxRetries || signal.aborted) throw error;
      // A Retry-After is honoured in full (retryDelay caps it): when it does not fit, the failure stands.
      const delay = Math.max(retryDelay({ attempt, error, baseDelayMs: 100, maxDelayMs: 1_000 }), error.retryAfterMs ?? 0);
      if (Date.now() + delay >= deadline) throw error;
      await sleep(delay, signal).catch((sleepError: unknown) => {
        throw timeout.aborted ? timedOut(options, sleepError) : sleepError;
      });
    }
  }
}

function timedOut(options: PostRerankOptions, cause: unknown): LlmError {
  return new LlmError({ kind: 'timeout', message: `${options.providerName}: no answer within ${options.timeoutMs} ms`, cause });
}

async function attemptPost(options: PostRerankOptions, signal: AbortSignal, timeout: AbortSignal): Promise<unknown> {
  let response: Response;
  let bodyText: string;
  try {
    response = await fetch(options.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
      body: JSON.stringify(options.body),
      signal,
    });
    bodyText = await response.text();
  } catch (error) {
    if (timeout.aborted) throw timedOut(options, error);
    if (signal.aborted) throw new LlmError({ kind: 'aborted', message: `${options.providerName}: request aborted`, cause: error });
    throw new LlmError({ kind: 'connection', message: `${options.providerName}: cannot reach ${new URL(options.url).host}`, cause: error });
  }
  if (!response.ok)
    throw httpError({
      providerName: options.providerName,
      status: response.status,
      headers: response.headers,
      bodyText,
      secret: options.apiKey,
    });
  try {
    return JSON.parse(bodyText) as unknown;
  } catch (error) {
    throw new LlmError({ kind: 'stream', message: `${options.providerName}: the answer is not JSON`, cause: error });
  }
}

/**
 * Scores in the documents' order from `{index, score}` pairs (any order): every document must be
 * scored once, with a finite number, or the answer is not trusted.
 */
export function scoresByIndex(pairs: ReadonlyArray<{ index: unknown; score: unknown }>, documents: number, providerName: string): number[] {
  const scores: Array<number | undefined> = new Array<number | undefined>(documents).fill(undefined);
  for (const { index, score } of pairs) {
    if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= documents)
      throw invalid(providerName, `an index out of range (${String(index)})`);
    if (typeof score !== 'number' || !Number.isFinite(score))
      throw invalid(providerName, `a score that is not a number for document ${String(index)}`);
    if (scores[index as number] !== undefined) throw invalid(providerName, `document ${String(index)} twice`);
    scores[index as number] = score;
  }
  const missing = scores.findIndex((score) => score === undefined);
  if (missing !== -1) throw invalid(providerName, `no score for document ${missing} of ${documents}`);
  return scores as number[];
}

export function invalid(providerName: string, what: string): LlmError {
  return new LlmError({ kind: 'stream', message: `${providerName}: the answer has ${what}` });
}
