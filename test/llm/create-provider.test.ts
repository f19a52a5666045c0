import { loadConfig } from '../../src/config';
import { AnthropicProvider } from '../../src/llm/anthropic.provider';
import { createLlmProvider } from '../../src/llm/create-provider';
import { OpenAiCompatibleProvider } from '../../src/llm/openai-compatible.provider';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { collectStream } from './stream-helpers';

let stub: StubLlmServer;

beforeAll(async () => {
  stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
});

afterEach(() => stub.reset());

afterAll(() => stub.close());

describe('createLlmProvider', () => {
  it('returns null when no provider is configured', () => {
    expect(createLlmProvider(loadConfig({}).llm)).toBeNull();
  });

  it.each([
    ['openai', OpenAiCompatibleProvider, 'Bearer key-1'],
    ['anthropic', AnthropicProvider, undefined],
  ] as const)('builds the %s provider from the configuration and reaches the model', async (name, providerClass, authorization) => {
    const config = loadConfig({ LLM_PROVIDER: name, LLM_BASE_URL: stub.url, LLM_MODEL: 'stub-model', LLM_API_KEY: 'key-1' });
    const provider = createLlmProvider(config.llm);
    expect(provider).toBeInstanceOf(providerClass);
    expect(provider).toMatchObject({ name, model: 'stub-model' });

    const { text, error } = await collectStream(provider!.stream({ messages: [{ role: 'user', content: 'ping' }] }));
    expect(error).toBeUndefined();
    expect(text).toBe('You said: ping');
    expect(stub.requests[0].headers.authorization).toBe(authorization);
  });

  it('applies the configured timeout', async () => {
    stub.script({ kind: 'hang' });
    const config = loadConfig({ LLM_PROVIDER: 'anthropic', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub-model', LLM_TIMEOUT_MS: '100' });
    const { error } = await collectStream(createLlmProvider(config.llm)!.stream({ messages: [{ role: 'user', content: 'ping' }] }));
    expect(error).toMatchObject({ kind: 'timeout' });
  });
});
