import { LSP_CHAT_MUTATION, LSP_SUBSCRIPTION, type StreamedMessage } from '../helpers/chat-client';
import { createLspCable, subscribeLikeLsp } from '../helpers/cable-clients';
import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

type CableMessage = {
  result?: { data?: { aiCompletionResponse: StreamedMessage | null }; errors?: Array<{ message: string }> };
  more?: boolean;
};

const until = (check: () => boolean, timeoutMs = 10_000) => waitUntil(check, { timeoutMs, intervalMs: 20 });

// The language server's whole chat flow, over ActionCable with its own client library, with the
// API and the worker in different processes' roles, events crossing Redis.
describe('Duo Chat over ActionCable (/-/cable, GraphqlChannel)', () => {
  let stub: StubLlmServer;
  let api: TestService;
  let worker: TestService;
  let alice: UserWithToken;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
    const env = {
      LLM_PROVIDER: 'anthropic',
      LLM_BASE_URL: stub.url,
      LLM_MODEL: 'stub-claude',
      LLM_API_KEY: 'test-key',
      GATEKEEPER: 'false',
    };
    api = await startTestService({ role: 'api', env });
    // A worker-only service on the same database and Redis prefix, as `npm run start:worker` runs.
    worker = await startTestService({
      role: 'worker',
      env: { ...env, DATABASE_URL: api.running.services.config.databaseUrl!, REDIS_PREFIX: api.redisPrefix },
    });
    alice = await userWithToken(api.prisma);
    await groupWithSeat(api.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: alice.username });
  });
  afterAll(async () => {
    // close(), not running.close(): it also removes the data folder the helper made for the worker.
    await worker?.close();
    await api?.close();
    await stub?.close();
  });

  it('subscribes as the language server does, then receives chunks 1..n and the final message', async () => {
    const cable = await createLspCable(`${api.url.replace(/^http/, 'ws')}/-/cable`, alice.token);
    try {
      const clientSubscriptionId = crypto.randomUUID();
      const { messages } = await subscribeLikeLsp(cable, {
        query: LSP_SUBSCRIPTION,
        variables: { htmlResponse: false, userId: `gid://gitlab/User/${alice.id}`, aiAction: 'CHAT', clientSubscriptionId },
        operationName: 'aiCompletionResponse',
      });
      const { body } = await api.graphql<{ aiAction: { requestId: string } }>(LSP_CHAT_MUTATION, {
        token: alice.token,
        variables: {
          question: 'hello over the cable',
          resourceId: null,
          currentFileContext: null,
          clientSubscriptionId,
          platformOrigin: 'vs_code_extension',
        },
      });
      const requestId = body.data!.aiAction.requestId;
      const payloads = () =>
        (messages as CableMessage[])
          .map((message) => message.result?.data?.aiCompletionResponse)
          .filter((value): value is StreamedMessage => Boolean(value));
      await until(() => payloads().some((message) => message.requestId === requestId && message.chunkId === null));

      const first = messages[0] as CableMessage;
      expect(first).toEqual({ result: { data: { aiCompletionResponse: null } }, more: true });
      expect((messages as CableMessage[]).slice(1).every((message) => message.more === true)).toBe(true);
      const chunks = payloads().filter((message) => message.chunkId !== null);
      const final = payloads().find((message) => message.chunkId === null)!;
      expect(chunks.map((chunk) => chunk.chunkId)).toEqual(chunks.map((_chunk, index) => index + 1));
      expect(chunks.map((chunk) => chunk.content).join('')).toBe(final.content);
      expect(final.content).toContain('hello over the cable');
      expect(final.role).toBe('ASSISTANT');
      // The Anthropic wire format was used, with the key.
      expect(stub.requests[0].format).toBe('anthropic');
      expect(stub.requests[0].headers['x-api-key']).toBe('test-key');
    } finally {
      cable.disconnect();
    }
  });

  it('rejects a connection without a valid token', async () => {
    const cable = await createLspCable(`${api.url.replace(/^http/, 'ws')}/-/cable`, 'glpat-not-a-real-token');
    try {
      await expect(cable.connect()).rejects.toBeTruthy();
    } finally {
      cable.disconnect();
    }
  });

  it("refuses a subscription to another user's responses over the cable", async () => {
    const cable = await createLspCable(`${api.url.replace(/^http/, 'ws')}/-/cable`, alice.token);
    try {
      const { messages } = await subscribeLikeLsp(cable, {
        query: LSP_SUBSCRIPTION,
        variables: { userId: 'gid://gitlab/User/999999', aiAction: 'CHAT', clientSubscriptionId: 'x' },
        operationName: 'aiCompletionResponse',
      });
      await until(() => messages.length > 0);
      const answer = messages[0] as CableMessage;
      expect(answer.more).toBe(false);
      expect(answer.result?.errors?.[0]?.message).toMatch(/only subscribe to your own AI responses/);
    } finally {
      cable.disconnect();
    }
  });
});
