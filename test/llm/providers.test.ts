import { AnthropicProvider } from '../../src/llm/anthropic.provider';
import { OpenAiCompatibleProvider } from '../../src/llm/openai-compatible.provider';
import type { LlmProvider, LlmRequest } from '../../src/llm/types';
import { startStubLlmServer, type StubLlmServer, type StubWireFormat } from '../helpers/stub-llm-server';
import { collectStream, refusedUrl } from './stream-helpers';

const API_KEY = 'sk-test-secret-key-1234';

type ProviderOptions = { baseUrl: string; apiKey?: string; timeoutMs?: number };

const PROVIDERS: { format: StubWireFormat; create: (options: ProviderOptions) => LlmProvider }[] = [
  { format: 'openai', create: (options) => new OpenAiCompatibleProvider({ model: 'stub-model', ...options }) },
  { format: 'anthropic', create: (options) => new AnthropicProvider({ model: 'stub-model', ...options }) },
];

/** 2 + 3 words: the stub reports them as input tokens. */
const REQUEST: LlmRequest = {
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Say hello world' },
  ],
};

let stub: StubLlmServer;

beforeAll(async () => {
  stub = await startStubLlmServer();
});

afterEach(() => stub.reset());

afterAll(() => stub.close());

describe.each(PROVIDERS)('$format provider', ({ format, create }) => {
  const provider = (options: Partial<ProviderOptions> = {}) => create({ baseUrl: stub.url, apiKey: API_KEY, timeoutMs: 2000, ...options });

  it('streams the deltas in order, then one finish with the usage', async () => {
    stub.script({ kind: 'stream', pieces: ['Hel', 'lo', ' wor', 'ld'] });
    const { events, error } = await collectStream(provider().stream(REQUEST));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'text-delta', text: ' wor' },
      { type: 'text-delta', text: 'ld' },
      { type: 'finish', reason: 'stop', usage: { inputTokens: 5, outputTokens: 4 } },
    ]);
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0].format).toBe(format);
    expect(stub.requests[0].body).toMatchObject({ model: 'stub-model', stream: true });
  });

  it('maps a length stop to finish reason "length"', async () => {
    stub.script({ kind: 'stream', pieces: ['cut sh'], finishReason: 'length' });
    const { events } = await collectStream(provider().stream(REQUEST));
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'length' });
  });

  it('echoes the last user message with the echo behaviour', async () => {
    stub.script({ kind: 'echo' });
    const { text, events } = await collectStream(
      provider().stream({ messages: [...REQUEST.messages, { role: 'assistant', content: 'Hi' }, { role: 'user', content: 'Ünïcode ✓' }] }),
    );
    expect(text).toBe('You said: Ünïcode ✓');
    expect(events.filter((event) => event.type === 'text-delta')).toHaveLength(3);
  });

  it('maps a 500 to a retryable http error with a short message', async () => {
    stub.script({ kind: 'status', status: 500 });
    const { events, error } = await collectStream(provider().stream(REQUEST));
    expect(events).toEqual([]);
    expect(error).toMatchObject({ kind: 'http', status: 500, isRetryable: true, message: `${format} answered HTTP 500: stub error 500` });
  });

  it('reads Retry-After from a 429', async () => {
    stub.script({ kind: 'status', status: 429, headers: { 'retry-after': '1' } });
    const { error } = await collectStream(provider().stream(REQUEST));
    expect(error).toMatchObject({ kind: 'http', status: 429, retryAfterMs: 1000, isRetryable: true });
  });

  it('maps a plain 400 to a non-retryable http error', async () => {
    stub.script({ kind: 'status', status: 400, body: { error: { message: 'messages: field required' } } });
    const { error } = await collectStream(provider().stream(REQUEST));
    expect(error).toMatchObject({ kind: 'http', status: 400, isRetryable: false });
  });

  it('maps the real "prompt too long" answer to prompt_too_long', async () => {
    stub.script({ kind: 'prompt-too-long' });
    const { error } = await collectStream(provider().stream(REQUEST));
    expect(error).toMatchObject({ kind: 'prompt_too_long', status: 400, isRetryable: false });
  });

  it('keeps the API key and most of a long body out of the error message', async () => {
    stub.script({ kind: 'status', status: 401, body: `invalid key ${API_KEY} ${'blah '.repeat(500)}` });
    const { error } = await collectStream(provider().stream(REQUEST));
    expect(error).toMatchObject({ kind: 'http', status: 401 });
    expect(error?.message).toContain('invalid key [redacted]');
    expect(error?.message).not.toContain(API_KEY);
    expect(error?.message.length).toBeLessThan(350);
  });

  it('throws a stream error when the connection dies mid-stream, after the text so far', async () => {
    stub.script({ kind: 'stream', pieces: ['one', ' two', ' three'], cut: { afterPieces: 2 } });
    const { text, events, error } = await collectStream(provider().stream(REQUEST));
    expect(text).toBe('one two');
    expect(events.some((event) => event.type === 'finish')).toBe(false);
    expect(error).toMatchObject({ kind: 'stream', isRetryable: false, message: `${format}: the stream broke off (other side closed)` });
    expect(await stub.requests[0].ended).toBe('cut');
  });

  it('throws a stream error when the body ends cleanly but without the end marker', async () => {
    stub.script({ kind: 'stream', pieces: ['one', ' two'], cut: { afterPieces: 1, how: 'end' } });
    const { text, error } = await collectStream(provider().stream(REQUEST));
    expect(text).toBe('one');
    expect(error).toMatchObject({ kind: 'stream' });
  });

  it('times out when no response headers come, and closes the request', async () => {
    stub.script({ kind: 'hang' });
    const started = Date.now();
    const { error } = await collectStream(provider({ timeoutMs: 150 }).stream(REQUEST));
    expect(error).toMatchObject({ kind: 'timeout', isRetryable: true, message: `${format}: no response headers within 150 ms` });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await stub.requests[0].ended).toBe('client-closed');
  });

  it('times out when the stream stalls after the headers', async () => {
    stub.script({ kind: 'stream', pieces: ['late'], delayMs: 5000 });
    const { error } = await collectStream(provider({ timeoutMs: 150 }).stream(REQUEST));
    expect(error).toMatchObject({ kind: 'timeout', message: `${format}: no more data within 150 ms` });
    expect(await stub.requests[0].ended).toBe('client-closed');
  });

  it('does not time out a stream slower in total than the timeout but never idle that long', async () => {
    stub.script({ kind: 'stream', pieces: ['a', 'b', 'c', 'd', 'e'], delayMs: 60 });
    const { text, error } = await collectStream(provider({ timeoutMs: 200 }).stream(REQUEST));
    expect(error).toBeUndefined();
    expect(text).toBe('abcde');
  });

  it('does not count the time the caller spends on an event as idle time', async () => {
    stub.script({ kind: 'stream', pieces: ['a', 'b', 'c'] });
    const texts: string[] = [];
    for await (const event of provider({ timeoutMs: 100 }).stream(REQUEST)) {
      if (event.type === 'text-delta') texts.push(event.text);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(texts).toEqual(['a', 'b', 'c']);
  });

  it('aborts the HTTP request when the caller aborts mid-stream', async () => {
    stub.script({ kind: 'stream', pieces: ['a', 'b', 'c', 'd'], delayMs: 100 });
    const controller = new AbortController();
    const { text, error } = await collectStream(provider().stream({ ...REQUEST, signal: controller.signal }), () => controller.abort());
    expect(text).toBe('a');
    expect(error).toMatchObject({ kind: 'aborted', isRetryable: false });
    expect(await stub.requests[0].ended).toBe('client-closed');
  });

  it('aborts the HTTP request while waiting for the headers', async () => {
    stub.script({ kind: 'hang' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const { error } = await collectStream(provider().stream({ ...REQUEST, signal: controller.signal }));
    expect(error).toMatchObject({ kind: 'aborted' });
    expect(await stub.requests[0].ended).toBe('client-closed');
  });

  it('sends nothing when the signal is already aborted', async () => {
    const { error } = await collectStream(provider().stream({ ...REQUEST, signal: AbortSignal.abort() }));
    expect(error).toMatchObject({ kind: 'aborted' });
    expect(stub.requests).toHaveLength(0);
  });

  it('closes the request when the caller stops reading early', async () => {
    stub.script({ kind: 'stream', pieces: ['a', 'b', 'c'], delayMs: 100 });
    for await (const event of provider().stream(REQUEST)) {
      expect(event).toEqual({ type: 'text-delta', text: 'a' });
      break;
    }
    expect(await stub.requests[0].ended).toBe('client-closed');
  });

  it('maps a refused connection to a retryable connection error', async () => {
    const { error } = await collectStream(provider({ baseUrl: await refusedUrl() }).stream(REQUEST));
    expect(error).toMatchObject({ kind: 'connection', isRetryable: true, message: `${format}: could not connect (ECONNREFUSED)` });
  });
});

describe('OpenAI-compatible wire format', () => {
  it('posts to {baseUrl}/chat/completions with a bearer token, usage asked for, options only when set', async () => {
    await collectStream(
      new OpenAiCompatibleProvider({ model: 'gpt-stub', baseUrl: `${stub.url}/v1/`, apiKey: API_KEY }).stream({
        ...REQUEST,
        maxTokens: 99,
        temperature: 0.2,
      }),
    );
    await collectStream(new OpenAiCompatibleProvider({ model: 'gpt-stub', baseUrl: stub.url }).stream(REQUEST));
    const [withOptions, plain] = stub.requests;
    expect(withOptions.path).toBe('/v1/chat/completions');
    expect(withOptions.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(withOptions.body).toEqual({
      model: 'gpt-stub',
      messages: REQUEST.messages,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 99,
      temperature: 0.2,
    });
    expect(plain.path).toBe('/chat/completions');
    expect(plain.headers.authorization).toBeUndefined();
    expect(plain.body).not.toHaveProperty('max_tokens');
    expect(plain.body).not.toHaveProperty('temperature');
  });

  it('throws a stream error for an error chunk mid-stream', async () => {
    stub.script({ kind: 'error-event', pieces: ['partial'], errorType: 'server_error' });
    const { text, error } = await collectStream(new OpenAiCompatibleProvider({ model: 'm', baseUrl: stub.url }).stream(REQUEST));
    expect(text).toBe('partial');
    expect(error).toMatchObject({ kind: 'stream', isRetryable: false });
  });
});

describe('Anthropic wire format', () => {
  it('posts to {baseUrl}/v1/messages with the key, version, system field and default max_tokens', async () => {
    await collectStream(new AnthropicProvider({ model: 'claude-stub', baseUrl: stub.url, apiKey: API_KEY }).stream(REQUEST));
    await collectStream(
      new AnthropicProvider({ model: 'claude-stub', baseUrl: `${stub.url}/v1` }).stream({
        messages: [{ role: 'user', content: 'hi' }],
        maxTokens: 10,
        temperature: 0,
      }),
    );
    const [withSystem, plain] = stub.requests;
    expect(withSystem.path).toBe('/v1/messages');
    expect(withSystem.headers).toMatchObject({ 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01' });
    expect(withSystem.body).toEqual({
      model: 'claude-stub',
      max_tokens: 2048,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hello world' }],
      stream: true,
    });
    expect(plain.path).toBe('/v1/messages');
    expect(plain.headers['x-api-key']).toBeUndefined();
    expect(plain.body).toEqual({
      model: 'claude-stub',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      temperature: 0,
    });
  });

  it.each([
    ['overloaded_error', { kind: 'http', status: 529, isRetryable: true }],
    ['api_error', { kind: 'stream', isRetryable: false }],
  ])('maps an %s event mid-stream', async (errorType, expected) => {
    stub.script({ kind: 'error-event', pieces: ['partial'], errorType });
    const { text, error } = await collectStream(new AnthropicProvider({ model: 'm', baseUrl: stub.url }).stream(REQUEST));
    expect(text).toBe('partial');
    expect(error).toMatchObject(expected);
  });
});
