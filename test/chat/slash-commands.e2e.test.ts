import { LSP_CHAT_MUTATION, subscribe, wsClient, type Collector } from '../helpers/chat-client';
import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';

// Duo Chat's slash commands through the chat mutation, the worker and the subscription, with
// the gatekeeper on: a command fixes the intent, works on the selection, the current file, the
// attached context or its own text, refuses when there is none, and /help needs no model.

const SELECTION = 'function total(items) {\n  return items.reduce((sum, item) => sum + item.price, 0);\n}';

describe('slash commands in Duo Chat', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let alice: UserWithToken;
  let client: ReturnType<typeof wsClient>;
  let stream: Collector;
  let clientSubscriptionId: string;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
    service = await startTestService({
      role: 'all',
      env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub', GATEKEEPER: 'true' },
    });
    alice = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: alice.username });
    client = wsClient(service.url, alice.token);
    clientSubscriptionId = crypto.randomUUID();
    stream = await subscribe(client, {
      userId: `gid://gitlab/User/${alice.id}`,
      clientSubscriptionId,
      aiAction: 'CHAT',
      htmlResponse: false,
    });
  });
  afterAll(async () => {
    stream?.stop();
    await client?.dispose();
    await service?.close();
    await stub?.close();
  });

  async function ask(question: string, options: { currentFileContext?: unknown; additionalContext?: unknown[] } = {}) {
    const modelCalls = stub.requests.length;
    const { body } = await service.graphql<{ aiAction: { requestId: string; errors: string[] } }>(LSP_CHAT_MUTATION, {
      token: alice.token,
      variables: {
        question,
        resourceId: null,
        currentFileContext: options.currentFileContext ?? null,
        clientSubscriptionId,
        platformOrigin: 'vs_code_extension',
        additionalContext: options.additionalContext ?? null,
      },
    });
    expect(body.errors).toBeUndefined();
    const requestId = body.data!.aiAction.requestId;
    const messages = await stream.untilFinal(requestId, 20_000);
    const final = messages.find((message) => message.chunkId === null && message.role === 'ASSISTANT')!;
    const prompt = stub.requests.length > modelCalls ? stub.requests.at(-1)!.body.messages! : null;
    return { final, prompt, modelCalls: stub.requests.length - modelCalls };
  }

  const text = (messages: { role: string; content: unknown }[] | null, role: string) =>
    (messages ?? [])
      .filter((message) => message.role === role)
      .map((message) => String(message.content))
      .join('\n');

  it('/help answers at once, without the model, listing the commands', async () => {
    const { final, modelCalls } = await ask('/help');
    expect(modelCalls).toBe(0);
    for (const name of ['/explain', '/tests', '/refactor', '/fix', '/troubleshoot', '/reset', '/clear'])
      expect(final.content).toContain(name);
  });

  it('/explain works on the selected text with the EXPLAIN task, whatever the gatekeeper would say', async () => {
    const { final, prompt, modelCalls } = await ask('/explain', {
      currentFileContext: { fileName: 'cart.js', selectedText: SELECTION, contentAboveCursor: null, contentBelowCursor: null },
    });
    expect(modelCalls).toBe(1);
    expect(text(prompt, 'system')).toContain('Task: explain what the code does');
    const user = text(prompt, 'user');
    expect(user).toContain(SELECTION);
    expect(user).toContain('Explain what the code the user selected (shown above) does and why.');
    expect(user).not.toMatch(/^\/explain/m);
    expect(final.content).toContain('You said:');
  });

  it('/tests takes the extra words as an addition to the task', async () => {
    const { prompt } = await ask('/tests with jest', { currentFileContext: { fileName: 'cart.js', selectedText: SELECTION } });
    expect(text(prompt, 'system')).toContain('Task: write focused tests');
    expect(text(prompt, 'user')).toContain('Write tests for the code the user selected (shown above). The user adds: with jest');
  });

  it('/refactor without a selection works on the current file', async () => {
    const { prompt } = await ask('/refactor', {
      currentFileContext: { fileName: 'cart.js', selectedText: '', contentAboveCursor: SELECTION, contentBelowCursor: '' },
    });
    expect(text(prompt, 'system')).toContain('Task: refactor the code');
    expect(text(prompt, 'user')).toContain("Refactor the user's current file (shown above) without changing what it does.");
  });

  it('/troubleshoot works on attached terminal output', async () => {
    const output = "TypeError: Cannot read properties of undefined (reading 'price')\n    at total (cart.js:2:45)";
    const { prompt } = await ask('/troubleshoot', {
      additionalContext: [{ id: 'terminal-1', category: 'TERMINAL', content: output, metadata: { title: 'npm test' } }],
    });
    expect(text(prompt, 'system')).toContain('Task: find the root cause');
    expect(text(prompt, 'user')).toContain(output);
  });

  it('/fix with only its own text works on that text', async () => {
    const { prompt } = await ask('/fix const x = [1, 2, 3].lenght;');
    expect(text(prompt, 'system')).toContain('Task: find the cause of the problem');
    expect(text(prompt, 'user')).toContain(
      'Find the problems in the code the user gave below and fix them.\n\nconst x = [1, 2, 3].lenght;',
    );
  });

  it.each(['/explain', '/tests', '/refactor', '/fix', '/troubleshoot'])(
    '%s with nothing to work on refuses clearly, without the model',
    async (command) => {
      const { final, modelCalls } = await ask(command, { currentFileContext: { fileName: 'cart.js', selectedText: '  ' } });
      expect(modelCalls).toBe(0);
      expect(final.content).toContain(`for ${command}.`);
      expect(final.content).toContain('Select the code in your editor');
      expect(final.errors).toEqual([]);
    },
  );

  it('an unknown command goes to the model as an ordinary question', async () => {
    const { modelCalls, prompt } = await ask('/frobnicate the widget');
    expect(modelCalls).toBe(1);
    expect(text(prompt, 'user')).toContain('/frobnicate the widget');
  });

  it('aiSlashCommands lists every command; without a Duo seat there are none', async () => {
    const query = 'query($url: String!) { aiSlashCommands(url: $url) { name description shouldSubmit } }';
    const { body } = await service.graphql<{ aiSlashCommands: Array<{ name: string; shouldSubmit: boolean }> }>(query, {
      token: alice.token,
      variables: { url: `${service.url}/` },
    });
    expect(body.data!.aiSlashCommands.map((command) => command.name)).toEqual([
      '/reset',
      '/clear',
      '/help',
      '/explain',
      '/tests',
      '/refactor',
      '/fix',
      '/troubleshoot',
    ]);
    expect(body.data!.aiSlashCommands.find((command) => command.name === '/help')!.shouldSubmit).toBe(true);
    const bob = await userWithToken(service.prisma);
    const noSeat = await service.graphql<{ aiSlashCommands: null }>(query, { token: bob.token, variables: { url: `${service.url}/` } });
    expect(noSeat.body.data!.aiSlashCommands).toBeNull();
    const tooLong = await service.graphql(query, { token: alice.token, variables: { url: `https://x/${'a'.repeat(3000)}` } });
    expect(tooLong.body.errors![0].extensions!.code).toBe('BAD_USER_INPUT');
  });
});
