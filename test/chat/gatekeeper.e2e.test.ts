import { LSP_CHAT_MUTATION, subscribe, wsClient } from '../helpers/chat-client';
import { groupWithSeat, userWithToken } from '../helpers/fixtures';
import { startStubLlmServer } from '../helpers/stub-llm-server';
import { startTestService } from '../helpers/test-service';

const GATE_QUERY = `subscription($userId: UserID, $c: String) { aiCompletionResponse(userId: $userId, aiAction: CHAT, clientSubscriptionId:
$c) {
  id requestId content errors role chunkId extras { gatekeeper { status intent confidence intents } }
} }`;

type GateMessage = {
  requestId: string;
  content: string;
  chunkId: number | null;
  role: string;
  extras?: { gatekeeper: { status: string; intent: string | null; intents: string[] } | null };
};

async function setUp(env: Record<string, string> = {}) {
  const stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
  const service = await startTestService({
    role: 'all',
    env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub', ...env },
  });
  const user = await userWithToken(service.prisma);
  await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
  const client = wsClient(service.url, user.token);
  const clientSubscriptionId = crypto.randomUUID();
  const stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, c: clientSubscriptionId }, GATE_QUERY);
  return { stub, service, user, client, clientSubscriptionId, stream };
}

type Setup = Awaited<ReturnType<typeof setUp>>;

async function ask(
  setup: Setup,
  question: string,
  extra: Record<string, unknown> = {},
): Promise<{ requestId: string; final: GateMessage; all: GateMessage[] }> {
  const { body } = await setup.service.graphql<{ aiAction: { requestId: string } }>(LSP_CHAT_MUTATION, {
    token: setup.user.token,
    variables: { question, clientSubscriptionId: setup.clientSubscriptionId, platformOrigin: 'vs_code_extension', ...extra },
  });
  const requestId = body.data!.aiAction.requestId;
  const all = (await setup.stream.untilFinal(requestId)) as unknown as GateMessage[];
  return { requestId, final: all.find((message) => message.chunkId === null)!, all };
}

async function tearDown(setup: Setup) {
  setup.stream.stop();
  await setup.client.dispose();
  await setup.service.close();
  await setup.stub.close();
}

describe('the chat gatekeeper, end to end', () => {
  let setup: Setup;
  beforeAll(async () => {
    setup = await setUp();
  });
  afterAll(() => tearDown(setup));

  it('answers a vague prompt at once, without the model, streamed and stored like any answer', async () => {
    const calls = setup.stub.requests.length;
    const { requestId, final, all } = await ask(setup, 'help');
    expect(final.extras?.gatekeeper).toMatchObject({ status: 'NEEDS_CLARIFICATION' });
    expect(final.content).toMatch(/not sure what you would like me to do/);
    expect(all.filter((message) => message.chunkId !== null).map((message) => message.chunkId)).toEqual([1]);
    expect(setup.stub.requests.length).toBe(calls);
    expect(await setup.service.prisma.aiMessage.count({ where: { requestId, role: 'assistant' } })).toBe(1);
    expect(
      Number(await setup.service.running.services.redis.get(`${setup.service.redisPrefix}:metrics:gatekeeper_llm_calls_saved`)),
    ).toBeGreaterThanOrEqual(1);
  });

  it('splits a multi-intent prompt into its parts without the model', async () => {
    const calls = setup.stub.requests.length;
    const { final } = await ask(setup, 'explain this function and then write unit tests for it');
    expect(final.extras?.gatekeeper).toMatchObject({ status: 'MULTI_INTENT', intents: ['EXPLAIN_CODE', 'WRITE_TESTS'] });
    expect(final.content).toMatch(/1\. explain this function/);
    expect(final.content).toMatch(/2\. write unit tests for it/);
    expect(setup.stub.requests.length).toBe(calls);
  });

  it('sends a clear prompt to the model with its intent as the task', async () => {
    const { final } = await ask(setup, 'Explain what this function does');
    expect(final.extras?.gatekeeper ?? null).toBeNull();
    expect(final.content).toContain('Explain what this function does');
    const system = String(setup.stub.requests.at(-1)!.body.messages![0].content);
    expect(system).toContain('Task: explain what the code does');
  });

  it('lets a client skip the gate for one message', async () => {
    const calls = setup.stub.requests.length;
    const { body } = await setup.service.graphql<{ aiAction: { requestId: string } }>(
      'mutation($c: String) { aiAction(input: { chat: { content: "help", skipGatekeeper: true }, clientSubscriptionId: $c }) { requestId ' +
        '} }',
      { token: setup.user.token, variables: { c: setup.clientSubscriptionId } },
    );
    await setup.stream.untilFinal(body.data!.aiAction.requestId);
    expect(setup.stub.requests.length).toBe(calls + 1);
  });

  it('tells an IDE what it would decide, through aiChatPromptCheck', async () => {
    const { body } = await setup.service.graphql<{ aiChatPromptCheck: Record<string, unknown> }>(
      '{ aiChatPromptCheck(content: "where is the auth middleware defined in this repo?") { status intent confidence intents ' +
        'alternatives { intent confidence } } }',
      { token: setup.user.token },
    );
    expect(body.data!.aiChatPromptCheck).toMatchObject({ status: 'CLEAR', intent: 'CODEBASE_SEARCH', intents: ['CODEBASE_SEARCH'] });
  });

  it("refuses an aiChatPromptCheck longer than aiAction's content may be, naming the field", async () => {
    const { body } = await setup.service.graphql('query($c: String!) { aiChatPromptCheck(content: $c) { status } }', {
      token: setup.user.token,
      variables: { c: 'why? '.repeat(120_001) },
    });
    expect(body.data?.aiChatPromptCheck ?? null).toBeNull();
    expect(body.errors?.[0]).toMatchObject({
      message: 'content is too long (maximum is 600000 characters)',
      extensions: { code: 'BAD_USER_INPUT', field: 'content' },
    });
  });
});

describe('the gatekeeper asking for confirmation', () => {
  let setup: Setup;
  beforeAll(async () => {
    // Thresholds are configuration: with these, a fairly sure prompt is confirmed before it runs.
    setup = await setUp({ GATEKEEPER_CLEAR_THRESHOLD: '1', GATEKEEPER_CONFIRM_THRESHOLD: '0.3' });
  });
  afterAll(() => tearDown(setup));

  it('asks, and runs the original prompt when the user says yes', async () => {
    const calls = setup.stub.requests.length;
    const question = 'Write a function that parses a URL into host and port';
    const asked = await ask(setup, question);
    expect(asked.final.extras?.gatekeeper).toMatchObject({ status: 'NEEDS_CONFIRMATION', intent: 'GENERATE_CODE' });
    expect(asked.final.content).toMatch(/would you like me to write new code\?/);
    expect(setup.stub.requests.length).toBe(calls);

    const confirmed = await ask(setup, 'yes');
    expect(setup.stub.requests.length).toBe(calls + 1);
    expect(confirmed.final.content).toContain(question);
    // A second "yes" confirms nothing more: it is a prompt of its own.
    const again = await ask(setup, 'yes');
    expect(again.final.content).not.toContain(question);
  });
});
