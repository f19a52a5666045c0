import { subscribe, wsClient } from '../helpers/chat-client';
import { groupWithSeat, userWithToken } from '../helpers/fixtures';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';

// A conversation is a conversation: greetings, thanks, questions about the assistant and follow-ups in
// a thread reach an answer through aiAction, never a request to clarify; "fix it" alone and "hmm" still get one.

const STREAM = `subscription($userId: UserID, $c: String) { aiCompletionResponse(userId: $userId, aiAction: CHAT, clientSubscriptionId:
$c) { requestId content role chunkId extras { gatekeeper { status intent } } } }`;

const CHAT = `mutation($content: String!, $c: String, $thread: AiConversationThreadID, $type: AiConversationsThreadsConversationType) {
  aiAction(input: { chat: { content: $content }, clientSubscriptionId: $c, threadId: $thread, conversationType: $type }) {
    requestId threadId errors
  }
}`;

const CHECK = `query($content: String!, $thread: AiConversationThreadID) {
  aiChatPromptCheck(content: $content, threadId: $thread) { status intent intents }
}`;

const CLARIFY = /not sure what you would like me to do/;

type Answer = { content: string; chunkId: number | null; extras?: { gatekeeper: { status: string; intent: string | null } | null } };

async function userOn(service: TestService) {
  const user = await userWithToken(service.prisma);
  await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
  const client = wsClient(service.url, user.token);
  const clientSubscriptionId = crypto.randomUUID();
  const stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, c: clientSubscriptionId }, STREAM);
  return { user, client, clientSubscriptionId, stream };
}

type Chatter = Awaited<ReturnType<typeof userOn>>;

/** Sends a message (in `thread`, or opening a DUO_CHAT thread) and waits for its final answer. */
async function say(service: TestService, chatter: Chatter, content: string, thread: string | null = null) {
  const { body } = await service.graphql<{ aiAction: { requestId: string; threadId: string } }>(CHAT, {
    token: chatter.user.token,
    variables: { content, c: chatter.clientSubscriptionId, thread, type: thread ? null : 'DUO_CHAT' },
  });
  expect(body.errors).toBeUndefined();
  const { requestId, threadId } = body.data!.aiAction;
  const all = (await chatter.stream.untilFinal(requestId)) as unknown as Answer[];
  return { threadId, answer: all.find((message) => message.chunkId === null)! };
}

async function check(service: TestService, chatter: Chatter, content: string, thread: string | null) {
  return service.graphql<{ aiChatPromptCheck: { status: string; intent: string | null; intents: string[] } | null }>(CHECK, {
    token: chatter.user.token,
    variables: { content, thread },
  });
}

async function close(chatter: Chatter) {
  chatter.stream.stop();
  await chatter.client.dispose();
}

describe('the gatekeeper in a conversation, with a model', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let alice: Chatter;
  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
    service = await startTestService({ role: 'all', env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub' } });
    alice = await userOn(service);
  });
  afterAll(async () => {
    await close(alice);
    await service.close();
    await stub.close();
  });

  it.each(['hi', 'Say hello', 'thanks!', 'goodbye', 'what can you do?', 'who are you?', "Bonjour, peux-tu m'aider ?", 'Guten Morgen!'])(
    'sends the conversational turn %j to the model, asked to answer briefly',
    async (content) => {
      const calls = stub.requests.length;
      const { answer } = await say(service, alice, content);
      expect(answer.content).not.toMatch(CLARIFY);
      expect(answer.extras?.gatekeeper ?? null).toBeNull();
      expect(stub.requests.length).toBe(calls + 1);
      const system = String(stub.requests.at(-1)!.body.messages![0].content);
      expect(system).toContain('the user is making conversation');
    },
  );

  it('reads a follow-up with the exchange before it: "Why?" after "What is a monad?" reaches the model as a general question', async () => {
    const { threadId } = await say(service, alice, 'What is a monad?');
    const calls = stub.requests.length;
    const { answer } = await say(service, alice, 'Why?', threadId);
    expect(answer.content).not.toMatch(CLARIFY);
    expect(stub.requests.length).toBe(calls + 1);
    const messages = stub.requests.at(-1)!.body.messages!;
    expect(String(messages[0].content)).toContain('Task: answer the question directly and accurately.');
    expect(messages).toContainEqual({ role: 'user', content: 'What is a monad?' });

    for (const followUp of ['give an example', "that's wrong, check again", 'Sorry, I meant the other function.']) {
      const before = stub.requests.length;
      const next = await say(service, alice, followUp, threadId);
      expect(next.answer.content).not.toMatch(CLARIFY);
      expect(stub.requests.length).toBe(before + 1);
    }
  });

  it('continues the request of the thread: "and in Go?" after a request for code is a request for code', async () => {
    const { threadId } = await say(service, alice, 'Write a function that reverses a string in Python');
    await say(service, alice, 'and in Go?', threadId);
    expect(String(stub.requests.at(-1)!.body.messages![0].content)).toContain('Task: write the requested code');
  });

  it('still asks about "fix it" opening a conversation, and about "hmm" inside one, without calling the model', async () => {
    const calls = stub.requests.length;
    const alone = await say(service, alice, 'fix it');
    expect(alone.answer.content).toMatch(CLARIFY);
    expect(alone.answer.extras?.gatekeeper).toMatchObject({ status: 'NEEDS_CLARIFICATION' });

    const { threadId } = await say(service, alice, 'What is a monad?');
    const hmm = await say(service, alice, 'hmm', threadId);
    expect(hmm.answer.content).toMatch(CLARIFY);
    // After a greeting there is nothing for "fix it" to point at either.
    const greeted = await say(service, alice, 'hello');
    const fix = await say(service, alice, 'fix it', greeted.threadId);
    expect(fix.answer.content).toMatch(CLARIFY);
    expect(stub.requests.length).toBe(calls + 2);
  });

  it('checks a message in its thread through aiChatPromptCheck(threadId); without it, as opening a conversation', async () => {
    const { threadId } = await say(service, alice, 'What is a monad?');
    const inThread = await check(service, alice, 'Why?', threadId);
    expect(inThread.body.errors).toBeUndefined();
    expect(inThread.body.data!.aiChatPromptCheck).toEqual({ status: 'CLEAR', intent: 'GENERAL_QUESTION', intents: ['GENERAL_QUESTION'] });
    const alone = await check(service, alice, 'Why?', null);
    expect(alone.body.data!.aiChatPromptCheck).toMatchObject({ status: 'NEEDS_CLARIFICATION', intent: null });
    const hmm = await check(service, alice, 'hmm', threadId);
    expect(hmm.body.data!.aiChatPromptCheck).toMatchObject({ status: 'NEEDS_CLARIFICATION' });
    const hello = await check(service, alice, 'hi', null);
    expect(hello.body.data!.aiChatPromptCheck).toEqual({ status: 'CLEAR', intent: 'CONVERSATION', intents: ['CONVERSATION'] });
  });

  it("answers another user's thread exactly as a missing one, and writes nothing", async () => {
    const { threadId } = await say(service, alice, 'What is a monad?');
    const bob = await userOn(service);
    try {
      const messages = await service.prisma.aiMessage.count();
      const foreign = await check(service, bob, 'Why?', threadId);
      const missing = await check(service, bob, 'Why?', 'gid://gitlab/Ai::Conversation::Thread/987654321');
      expect(foreign.body.data?.aiChatPromptCheck ?? null).toBeNull();
      expect(foreign.body.errors?.[0]).toMatchObject({
        message: `Thread ${threadId} is not found.`,
        extensions: { code: 'BAD_USER_INPUT', field: 'threadId' },
      });
      expect(missing.body.errors?.[0]).toMatchObject({
        message: 'Thread gid://gitlab/Ai::Conversation::Thread/987654321 is not found.',
        extensions: { code: 'BAD_USER_INPUT', field: 'threadId' },
      });
      expect(await service.prisma.aiMessage.count()).toBe(messages);
    } finally {
      await close(bob);
    }
  });
});

describe('the gatekeeper in a conversation, without a model', () => {
  let service: TestService;
  let carol: Chatter;
  beforeAll(async () => {
    service = await startTestService({ role: 'all' });
    carol = await userOn(service);
  });
  afterAll(async () => {
    await close(carol);
    await service.close();
  });

  it.each(['hi', 'thanks!', 'who are you?', 'what can you do?'])(
    'answers %j at once with what the assistant does here, never asking to clarify',
    async (content) => {
      const { answer } = await say(service, carol, content);
      expect(answer.content).not.toMatch(CLARIFY);
      expect(answer.content).toMatch(/^Hi! I'm GitLab Duo Chat, here to help with your code\./);
      expect(answer.content).toContain('`/explain`, `/tests`, `/refactor`, `/fix`, `/troubleshoot`');
      expect(answer.content).toContain('`/help`');
      expect(answer.content).toMatch(/No language model is configured/);
    },
  );

  it('lets a follow-up in a thread through to the usual answer, and still asks about "fix it" alone', async () => {
    const { threadId } = await say(service, carol, 'What is a monad?');
    const why = await say(service, carol, 'Why?', threadId);
    expect(why.answer.content).not.toMatch(CLARIFY);
    expect(why.answer.content).toMatch(/^No language model is configured for this duo-slice instance/);
    const alone = await say(service, carol, 'fix it');
    expect(alone.answer.content).toMatch(CLARIFY);
  });
});
