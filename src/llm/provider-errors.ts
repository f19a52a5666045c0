import { LlmError } from './types';

/** Longest provider text we quote in an error message: enough to diagnose, too short to leak a prompt. */
export const MAX_REASON_CHARS = 300;

/**
 * What the body of a 400 or 413 says when the prompt does not fit: OpenAI's code, vLLM's and
 * llama.cpp's wording, and Anthropic's "prompt is too long" and "request_too_large".
 */
const PROMPT_TOO_LONG = [
  /context_length_exceeded/i,
  /maximum context length/i,
  /exceeds? the (available )?context (size|window|length)/i,
  /prompt is too long/i,
  /request_too_large/i,
];

/** Collapses whitespace, removes the secret if a provider echoes it, and cuts to MAX_REASON_CHARS. */
export function safeReason(text: string, secret?: string): string {
  let reason = text.replace(/\s+/g, ' ').trim();
  if (secret) reason = reason.split(secret).join('[redacted]');
  return reason.length > MAX_REASON_CHARS ? `${reason.slice(0, MAX_REASON_CHARS)}…` : reason;
}

/** Retry-After in milliseconds, from seconds ("1", "1.5") or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // Every HTTP-date names its month; Date.parse alone would also take "-1" for a year.
  const date = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Both providers wrap errors as `{ error: { message, type, code } }`; anything else is quoted as text. */
function errorReason(bodyText: string): string {
  try {
    const body = JSON.parse(bodyText) as { error?: { message?: unknown; type?: unknown } | string; message?: unknown };
    if (typeof body.error === 'string') return body.error;
    if (typeof body.error?.message === 'string') return body.error.message;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not JSON (a proxy's HTML page, plain text): quote it as it is.
  }
  return bodyText;
}

export type HttpErrorOptions = {
  providerName: string;
  status: number;
  headers: Headers;
  bodyText: string;
  /** Removed from the message, in case the provider quotes it. */
  secret?: string;
};

/** The LlmError for a non-2xx answer: 'prompt_too_long' when a 400/413 says so, otherwise 'http'. */
export function httpError(options: HttpErrorOptions): LlmError {
  const { providerName, status, headers, bodyText } = options;
  const reason = safeReason(errorReason(bodyText), options.secret);
  if ((status === 400 || status === 413) && PROMPT_TOO_LONG.some((pattern) => pattern.test(bodyText))) {
    return new LlmError({
      kind: 'prompt_too_long',
      status,
      message: `${providerName}: the prompt is too long for the model (HTTP ${status}: ${reason})`,
    });
  }
  // OpenAI also sends a millisecond variant, more precise than whole seconds.
  const retryAfterMs = parseMilliseconds(headers.get('retry-after-ms')) ?? parseRetryAfter(headers.get('retry-after'));
  return new LlmError({
    kind: 'http',
    status,
    retryAfterMs,
    message: reason ? `${providerName} answered HTTP ${status}: ${reason}` : `${providerName} answered HTTP ${status}`,
  });
}

function parseMilliseconds(value: string | null): number | undefined {
  if (value === null || !/^\d+(\.\d+)?$/.test(value.trim())) return undefined;
  return Math.round(Number(value.trim()));
}

/** Parses one event's JSON data; a malformed event means the stream cannot be trusted any further. */
export function parseEventJson(data: string, providerName: string): unknown {
  try {
    return JSON.parse(data);
  } catch (error) {
    throw new LlmError({ kind: 'stream', message: `${providerName} sent an event that is not JSON`, cause: error });
  }
}
