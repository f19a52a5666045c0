import http from 'node:http';
import https from 'node:https';
import { httpError, safeReason } from './provider-errors';
import { readSseEvents, type SseEvent } from './sse';
import { LlmError } from './types';

/** Default idle timeout of the providers: the longest wait for response headers or for the next bytes. */
export const DEFAULT_LLM_TIMEOUT_MS = 60_000;

/** Error bodies are only quoted in part, so there is no point reading a huge one. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export type PostSseOptions = {
  /** Names the provider in error messages, e.g. "openai". */
  providerName: string;
  url: string;
  headers: Record<string, string>;
  /** Sent as JSON. */
  body: unknown;
  /** Idle timeout: the longest wait for response headers or between two chunks of bytes. */
  timeoutMs: number;
  /** Aborting it aborts the HTTP request. */
  signal?: AbortSignal;
  /** The API key: never allowed into an error message. */
  secret?: string;
};

/**
 * POSTs a JSON body and yields the server-sent events of the answer. Every failure is thrown as an
 * LlmError: 'connection', 'timeout', 'http' or 'prompt_too_long' (non-2xx), 'stream' (the body broke
 * off) or 'aborted'. Ending the iteration early aborts the request.
 */
export async function* postSse(options: PostSseOptions): AsyncGenerator<SseEvent> {
  const { providerName, signal } = options;
  if (signal?.aborted) throw abortedError(providerName, signal.reason);

  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const watchdog = new IdleWatchdog(options.timeoutMs, () => controller.abort());
  let response: http.IncomingMessage | undefined;

  /** When we ended the request ourselves, that (not the resulting fetch error) is what callers need to know. */
  const endedByUs = (error: unknown): LlmError | undefined => {
    if (signal?.aborted) return abortedError(providerName, error);
    if (!watchdog.fired) return undefined;
    const waitedFor = watchdog.phase === 'headers' ? 'response headers' : 'more data';
    return new LlmError({ kind: 'timeout', message: `${providerName}: no ${waitedFor} within ${options.timeoutMs} ms`, cause: error });
  };

  try {
    watchdog.arm();
    try {
      response = await post(options.url, options.headers, JSON.stringify(options.body), controller.signal);
    } catch (error) {
      throw (
        endedByUs(error) ??
        new LlmError({ kind: 'connection', message: `${providerName}: could not connect (${networkReason(error)})`, cause: error })
      );
    }
    watchdog.phase = 'body';

    const status = response.statusCode ?? 0;
    if (status < 200 || status > 299) {
      let bodyText = '';
      try {
        bodyText = await readErrorBody(response, watchdog);
      } catch (error) {
        // The status is what matters; a body that breaks off only loses the detail.
        const ours = endedByUs(error);
        if (ours) throw ours;
      }
      throw httpError({ providerName, status, headers: headersOf(response), bodyText, secret: options.secret });
    }

    const watchedBytes = watchBytes(
      // Not destroyed when the caller stops early: the finally below decides (see there).
      response.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>,
      watchdog,
      (error) =>
        endedByUs(error) ??
        new LlmError({ kind: 'stream', message: `${providerName}: the stream broke off (${networkReason(error)})`, cause: error }),
    );
    yield* readSseEvents(watchedBytes);
  } finally {
    watchdog.disarm();
    signal?.removeEventListener('abort', onAbort);
    if (response?.complete) {
      // The whole answer has arrived (callers stop at the end marker, just before the response's
      // own end is read): read that end, so the keep-alive socket goes back to the pool instead of
      // being destroyed (which made every model call a new connection). Already read and destroyed
      // (the usual case when the process is busy), the socket is back in the pool: nothing to end,
      // and no abort (its DOMException cost ~50 µs per model call in bench/session.ts).
      if (!response.destroyed) response.resume();
    } else {
      // Anything else (left early, failed, timed out, aborted): end the request and its connection.
      response?.destroy();
      controller.abort();
    }
  }
}

/**
 * Keep-alive connections per protocol, as fetch keeps them. node:http rather than fetch: a
 * streamed call through fetch (undici, web streams) costs about three times the CPU (bench/session.ts
 * makes 50 at once; see docs/performance.md).
 */
const AGENTS = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** POSTs `body` and resolves with the response once its headers arrived; aborting `signal` destroys the request. */
function post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<http.IncomingMessage> {
  const target = new URL(url);
  const protocol = target.protocol === 'https:' ? 'https:' : 'http:';
  if (target.protocol !== protocol) return Promise.reject(new TypeError(`unsupported protocol ${target.protocol}`));
  const send = protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const request = send(
      target,
      {
        method: 'POST',
        agent: AGENTS[protocol],
        signal,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      resolve,
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** The response's headers as a fetch Headers (what httpError reads retry hints from). */
function headersOf(response: http.IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return headers;
}

/** Restarts on every chunk and is paused while our caller handles one, so a slow caller is no timeout. */
class IdleWatchdog {
  fired = false;
  phase: 'headers' | 'body' = 'headers';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly onFire: () => void,
  ) {}

  arm(): void {
    this.disarm();
    this.timer = setTimeout(() => {
      this.fired = true;
      this.onFire();
    }, this.timeoutMs);
  }

  disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

async function* watchBytes(
  body: AsyncIterable<Uint8Array>,
  watchdog: IdleWatchdog,
  explain: (error: unknown) => LlmError,
): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body) {
      watchdog.disarm();
      yield chunk;
      watchdog.arm();
    }
  } catch (error) {
    throw explain(error);
  }
}

async function readErrorBody(response: AsyncIterable<Uint8Array>, watchdog: IdleWatchdog): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  for await (const chunk of response) {
    watchdog.arm();
    text += decoder.decode(chunk, { stream: true });
    bytes += chunk.byteLength;
    if (bytes >= MAX_ERROR_BODY_BYTES) break;
  }
  return text + decoder.decode();
}

function abortedError(providerName: string, cause: unknown): LlmError {
  return new LlmError({ kind: 'aborted', message: `${providerName}: the request was aborted`, cause });
}

/**
 * The useful part of a network error. undici hides it ("ECONNREFUSED", "other side closed") in `cause`, sometimes in an
 * AggregateError. Duck-typed, because its errors come from another realm than ours under jest.
 */
function networkReason(error: unknown): string {
  let current = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown } | undefined;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth += 1) {
    // node:http says a connection the server closed early is "aborted" (mid-body) or "socket hang up" (before the headers).
    if (current.code === 'ECONNRESET' && (current.message === 'aborted' || current.message === 'socket hang up'))
      return 'other side closed';
    if (typeof current.code === 'string' && !current.code.startsWith('UND_ERR_')) return current.code;
    const nested: unknown = Array.isArray(current.errors) ? (current.errors as unknown[])[0] : current.cause;
    if (nested === undefined) return typeof current.message === 'string' ? safeReason(current.message) : 'unknown network error';
    current = nested as typeof current;
  }
  return 'unknown network error';
}
