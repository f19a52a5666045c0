import { AnthropicProvider } from '../../src/llm/anthropic.provider';
import { OpenAiCompatibleProvider } from '../../src/llm/openai-compatible.provider';
import { streamWithRetry, type RetryInfo, type StreamWithRetryOptions } from '../../src/llm/stream-with-retry';
import type { LlmRequest } from '../../src/llm/types';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { collectStream, refusedUrl } from './stream-helpers';

const REQUEST: LlmRequest = { messages: [{ role: 'user', content: 'hello' }] };

let stub: StubLlmServer;

beforeAll(async () => {
  stub = await startStubLlmServer();
});

afterEach(() => stub.reset());

afterAll(() => stub.close());

/** Streams with retries through the real OpenAI-compatible client; returns what onRetry saw too. */
async function run(options: Partial<StreamWithRetryOptions> & { timeoutMs?: number } = {}) {
  const retries: RetryInfo[] = [];
  const provider =
    options.provider ?? new OpenAiCompatibleProvider({ model: 'm', baseUrl: stub.url, timeoutMs: options.timeoutMs ?? 2000 });
  const result = await collectStream(
    streamWithRetry({
      provider,
      request: REQUEST,
      maxRetries: 2,
      baseDelayMs: 10,
      ...options,
      onRetry: (info) => {
        retries.push(info);
        options.onRetry?.(info);
      },
    }),
  );
  return { ...result, retries };
}

describe('streamWithRetry', () => {
  it('retries a 500 and then streams the answer', async () => {
    stub.script({ kind: 'status', status: 500 }, { kind: 'stream', pieces: ['It', ' worked'] });
    const { events, error, retries } = await run();
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text-delta', text: 'It' },
      { type: 'text-delta', text: ' worked' },
      { type: 'finish', reason: 'stop', usage: { inputTokens: 1, outputTokens: 2 } },
    ]);
    expect(stub.requests).toHaveLength(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attempt: 1, error: { kind: 'http', status: 500 } });
  });

  it('waits at least the Retry-After of a 429', async () => {
    stub.script({ kind: 'status', status: 429, headers: { 'retry-after': '1' } });
    const { text, retries } = await run();
    expect(text).toBe('Hello from the stub.');
    expect(retries.map((retry) => retry.delayMs)).toEqual([1000]);
    const [limited, retried] = stub.requests;
    // Timers may fire up to a millisecond early on a millisecond clock.
    expect(retried.receivedAt - limited.receivedAt).toBeGreaterThanOrEqual(999);
  });

  it('caps a Retry-After at maxDelayMs', async () => {
    stub.script({ kind: 'status', status: 503, headers: { 'retry-after': '30' } });
    const { text, retries } = await run({ maxDelayMs: 50 });
    expect(text).toBe('Hello from the stub.');
    expect(retries.map((retry) => retry.delayMs)).toEqual([50]);
  });

  it('backs off exponentially with jitter, within bounds', async () => {
    stub.script({ kind: 'status', status: 500 }, { kind: 'status', status: 502 }, { kind: 'status', status: 503 });
    const { text, retries } = await run({ maxRetries: 3, baseDelayMs: 40 });
    expect(text).toBe('Hello from the stub.');
    const delays = retries.map((retry) => retry.delayMs);
    expect(delays).toHaveLength(3);
    delays.forEach((delay, index) => {
      const backoff = 40 * 2 ** index;
      expect(delay).toBeGreaterThanOrEqual(backoff / 2);
      expect(delay).toBeLessThanOrEqual(backoff);
    });
  });

  it.each([
    ['a 400', { kind: 'status', status: 400 } as const, { kind: 'http', status: 400 }],
    ['a 401', { kind: 'status', status: 401 } as const, { kind: 'http', status: 401 }],
    ['a prompt that is too long', { kind: 'prompt-too-long' } as const, { kind: 'prompt_too_long' }],
  ])('does not retry %s', async (_name, behaviour, expected) => {
    stub.script(behaviour);
    const { error, retries } = await run();
    expect(error).toMatchObject(expected);
    expect(retries).toEqual([]);
    expect(stub.requests).toHaveLength(1);
  });

  it('gives up after maxRetries retries and throws the last error', async () => {
    stub.script(
      { kind: 'status', status: 500 },
      { kind: 'status', status: 502 },
      { kind: 'status', status: 503 },
      { kind: 'status', status: 504 },
    );
    const { error, retries } = await run({ maxRetries: 2 });
    expect(error).toMatchObject({ kind: 'http', status: 503 });
    expect(retries.map((retry) => retry.attempt)).toEqual([1, 2]);
    expect(stub.requests).toHaveLength(3);
  });

  it('makes a single attempt with maxRetries 0', async () => {
    stub.script({ kind: 'status', status: 500 });
    const { error } = await run({ maxRetries: 0 });
    expect(error).toMatchObject({ kind: 'http', status: 500 });
    expect(stub.requests).toHaveLength(1);
  });

  it('retries refused connections', async () => {
    const provider = new OpenAiCompatibleProvider({ model: 'm', baseUrl: await refusedUrl() });
    const { error, retries } = await run({ provider, maxRetries: 2 });
    expect(error).toMatchObject({ kind: 'connection' });
    expect(retries).toHaveLength(2);
  });

  it('does not retry a stream cut in the middle, after text reached the caller', async () => {
    stub.script({ kind: 'stream', pieces: ['half', ' an answer'], cut: { afterPieces: 1 } });
    const { text, error, retries } = await run();
    expect(text).toBe('half');
    expect(error).toMatchObject({ kind: 'stream' });
    expect(retries).toEqual([]);
    expect(stub.requests).toHaveLength(1);
  });

  it('does not retry even a retryable error once text reached the caller', async () => {
    stub.script({ kind: 'error-event', pieces: ['half'] });
    const provider = new AnthropicProvider({ model: 'm', baseUrl: stub.url });
    const { text, error, retries } = await run({ provider });
    expect(text).toBe('half');
    expect(error).toMatchObject({ kind: 'http', status: 529, isRetryable: true });
    expect(retries).toEqual([]);
    expect(stub.requests).toHaveLength(1);
  });

  it('retries a retryable error in a stream that had no text yet', async () => {
    stub.script({ kind: 'error-event' });
    const provider = new AnthropicProvider({ model: 'm', baseUrl: stub.url });
    const { text, error, retries } = await run({ provider });
    expect(error).toBeUndefined();
    expect(text).toBe('Hello from the stub.');
    expect(retries).toHaveLength(1);
  });

  it('retries a timeout', async () => {
    stub.script({ kind: 'hang' });
    const { text, retries } = await run({ timeoutMs: 100 });
    expect(text).toBe('Hello from the stub.');
    expect(retries[0].error).toMatchObject({ kind: 'timeout' });
  });

  it('stops waiting to retry when the request is aborted', async () => {
    stub.script({ kind: 'status', status: 429, headers: { 'retry-after': '5' } });
    const controller = new AbortController();
    const started = Date.now();
    const { error, retries } = await run({
      request: { ...REQUEST, signal: controller.signal },
      onRetry: () => setTimeout(() => controller.abort(), 20),
    });
    expect(error).toMatchObject({ kind: 'aborted' });
    expect(retries.map((retry) => retry.delayMs)).toEqual([5000]);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(stub.requests).toHaveLength(1);
  });
});
