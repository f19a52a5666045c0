import type { Client } from 'graphql-ws';
import { groupWithSeat, projectIn, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { LSP_CHAT_MUTATION, LSP_GET_MESSAGES, subscribe, wsClient } from '../helpers/chat-client';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';
import { MARKDOWN_VERSION } from '../../src/chat/render-markdown';

const FILE_ITEM = {
  id: 'file:///work/app/src/parse.ts',
  category: 'FILE',
  content: 'export function parseConnection(url: string) { return new URL(url); }',
  metadata: { schemaVersion: 'v0.0.1', type: 'open_tabs', isEnabled: true, relativePath: 'src/parse.ts', project: 'app' },
};

describe('Duo Chat end to end: the language server over HTTP and graphql-ws, a stub model', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let alice: UserWithToken;
  let client: Client;
  const userGid = () => `gid://gitlab/User/${alice.id}`;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
    service = await startTestService({
      role: 'all',
      // These tests are about the pipeline; test/chat/gatekeeper.e2e.test.ts covers the gate.
      env: {
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: stub.url,
        LLM_MODEL: 'stub-model',
        LLM_TIMEOUT_MS: '1500',
        LLM_MAX_RETRIES: '2',
        GATEKEEPER: 'false',
      },
    });
    alice = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: alice.username });
    client = wsClient(service.url, alice.token);
  });
  afterAll(async () => {
    await client?.dispose();
    await service?.close();
    await stub?.close();
  });
  afterEach(() => stub.reset());

  const chat = (variables: Record<string, unknown>, token = alice.token) =>
    service.graphql<{ aiAction: { requestId: string; errors: string[] } | null }>(LSP_CHAT_MUTATION, {
      token,
      variables: { resourceId: null, currentFileContext: null, platformOrigin: 'vs_code_extension', ...variables },
    });

  it('streams contiguous chunks, then the final message, and stores both messages with their context', async () => {
    const clientSubscriptionId = crypto.randomUUID();
    const stream = await subscribe(client, { htmlResponse: false, userId: userGid(), aiAction: 'CHAT', clientSubscriptionId });
    const echo = await subscribe(client, { htmlResponse: true, userId: userGid(), aiAction: 'CHAT' });
    const { body } = await chat({ question: 'What does parseConnection do?', clientSubscriptionId, additionalContext: [FILE_ITEM] });
    expect(body.errors).toBeUndefined();
    const requestId = body.data!.aiAction!.requestId;
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);

    const received = await stream.untilFinal(requestId);
    const chunks = received.filter((message) => message.chunkId !== null);
    const final = received.find((message) => message.chunkId === null)!;
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks.map((chunk) => chunk.chunkId)).toEqual(chunks.map((_chunk, index) => index + 1));
    expect(chunks.every((chunk) => chunk.role === 'ASSISTANT' && chunk.requestId === requestId)).toBe(true);
    expect(chunks.map((chunk) => chunk.content).join('')).toBe(final.content);
    expect(final.content).toContain('What does parseConnection do?');
    expect(final.errors).toEqual([]);
    expect(final.extras?.sources).toEqual([]);
    // The stream topic never echoes the user's prompt.
    expect(received.some((message) => message.role === 'USER')).toBe(false);

    // The plain topic gets the prompt echo and the final message, no chunks.
    await echo.untilFinal(requestId);
    const plain = echo.messages.filter((message) => message.requestId === requestId);
    expect(plain.map((message) => [message.role, message.chunkId])).toEqual([
      ['USER', null],
      ['ASSISTANT', null],
    ]);
    expect(plain[1].contentHtml).toContain('<p>');

    // What the model saw: the system prompt, the file with its path and language, the question.
    const sent = stub.requests[0].body.messages!;
    expect(sent[0]).toMatchObject({ role: 'system' });
    expect(String(sent[sent.length - 1].content)).toContain('<file path="src/parse.ts" language="typescript">');

    const messages = await service.graphql<{ aiMessages: { nodes: Array<Record<string, any>> } }>(LSP_GET_MESSAGES, {
      token: alice.token,
      variables: { requestIds: [requestId] },
    });
    const nodes = messages.body.data!.aiMessages.nodes;
    expect(nodes.map((node) => node.role)).toEqual(['USER', 'ASSISTANT']);
    expect(nodes[0].extras.additionalContext).toEqual([{ id: FILE_ITEM.id, category: 'FILE', metadata: FILE_ITEM.metadata }]);
    expect(nodes[1].content).toBe(final.content);
    stream.stop();
    echo.stop();
  });

  it("stores an answer's HTML with it and serves that while the renderer's version is the one it was made by", async () => {
    const echo = await subscribe(client, { htmlResponse: true, userId: userGid(), aiAction: 'CHAT' });
    const { body } = await chat({ question: 'Explain **bold** and `code`' });
    const requestId = body.data!.aiAction!.requestId;
    const final = (await echo.untilFinal(requestId)).find((message) => message.role === 'ASSISTANT' && message.chunkId === null)!;
    type Row = { role: string; content_html: string | null; cached_markdown_version: number | null };
    const rows = () =>
      service.prisma.$queryRawUnsafe<Row[]>(
        "SELECT role::text, content_html, cached_markdown_version FROM ai_messages WHERE request_id = $1::uuid ORDER BY role = 'assistant'",
        requestId,
      );
    const [question, answer] = await rows();
    // The question is rendered only when read; the answer was rendered as it was stored, by the worker.
    expect(question).toMatchObject({ role: 'user', content_html: null, cached_markdown_version: null });
    expect(answer).toMatchObject({ role: 'assistant', cached_markdown_version: MARKDOWN_VERSION });
    expect(answer.content_html).toContain('<strong>bold</strong>');
    expect(final.contentHtml).toBe(answer.content_html);
    const readHtml = async () => {
      const read = await service.graphql<{ aiMessages: { nodes: Array<{ role: string; contentHtml: string | null }> } }>(LSP_GET_MESSAGES, {
        token: alice.token,
        variables: { requestIds: [requestId] },
      });
      return read.body.data!.aiMessages.nodes.map((node) => [node.role, node.contentHtml]);
    };
    expect(await readHtml()).toEqual([
      ['USER', '<p>Explain <strong>bold</strong> and <code>code</code></p>\n'],
      ['ASSISTANT', answer.content_html],
    ]);
    // What is read is the stored rendering, not a new one...
    await service.prisma.$executeRawUnsafe(
      `UPDATE ai_messages SET content_html = '<p>as stored</p>' WHERE request_id = $1::uuid AND role = 'assistant'`,
      requestId,
    );
    expect((await readHtml())[1]).toEqual(['ASSISTANT', '<p>as stored</p>']);
    // ...while it was made by today's renderer: one of another version is rendered afresh.
    await service.prisma.$executeRawUnsafe(
      `UPDATE ai_messages SET cached_markdown_version = $2 WHERE request_id = $1::uuid AND role = 'assistant'`,
      requestId,
      MARKDOWN_VERSION - 1,
    );
    expect((await readHtml())[1]).toEqual(['ASSISTANT', answer.content_html]);
    echo.stop();
  });

  it('returns context items in both shapes from aiMessages', async () => {
    const { body } = await chat({ question: 'Explain this file', clientSubscriptionId: null, additionalContext: [FILE_ITEM] });
    const requestId = body.data!.aiAction!.requestId;
    const { body: read } = await service.graphql<{ aiMessages: { nodes: Array<Record<string, any>> } }>(
      `query($ids: [ID!]) { aiMessages(requestIds: $ids, roles: [USER]) { nodes { contextItems { id schemaVersion category type ` +
        `isEnabled disabledReasons metadata } extras { contextItemIds additionalContext { id category content } } } } }`,
      { token: alice.token, variables: { ids: [requestId] } },
    );
    expect(read.errors).toBeUndefined();
    const [node] = read.data!.aiMessages.nodes;
    expect(node.contextItems).toEqual([
      {
        id: FILE_ITEM.id,
        schemaVersion: 'v0.0.1',
        category: 'FILE',
        type: 'open_tabs',
        isEnabled: true,
        disabledReasons: [],
        metadata: FILE_ITEM.metadata,
      },
    ]);
    expect(node.extras).toEqual({
      contextItemIds: [FILE_ITEM.id],
      additionalContext: [{ id: FILE_ITEM.id, category: 'FILE', content: FILE_ITEM.content }],
    });
  });

  describe('refuses bad input with a clear error and stores nothing', () => {
    const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['a blank question', { question: '   ' }, 'BAD_USER_INPUT', /content can't be blank/],
      [
        'an id over 255 characters',
        { additionalContext: [{ ...FILE_ITEM, id: 'x'.repeat(256) }] },
        'BAD_USER_INPUT',
        /additionalContext\[0\].*id is too long/,
      ],
      [
        'content over 600,000 characters',
        { additionalContext: [{ ...FILE_ITEM, content: 'x'.repeat(600_001) }] },
        'BAD_USER_INPUT',
        /additionalContext\[0\].*content is too long/,
      ],
      [
        'metadata that is not an object',
        { additionalContext: [{ ...FILE_ITEM, metadata: ['a'] }] },
        'BAD_USER_INPUT',
        /metadata must be an object/,
      ],
      [
        'a disabled item',
        { additionalContext: [{ ...FILE_ITEM, metadata: { isEnabled: false, disabledReasons: ['Duo is disabled for this project'] } }] },
        'BAD_USER_INPUT',
        /additionalContext\[0\].*is disabled \(Duo is disabled for this project\)/,
      ],
      [
        'an unknown schema major version',
        { additionalContext: [{ ...FILE_ITEM, metadata: { schemaVersion: 'v2.0.0' } }] },
        'BAD_USER_INPUT',
        /schemaVersion "v2\.0\.0" is not supported; accepted: v0\.x\.x/,
      ],
      ['the same item twice', { additionalContext: [FILE_ITEM, FILE_ITEM] }, 'BAD_USER_INPUT', /additionalContext\[1\].*sent twice/],
    ];
    it.each(cases)('%s', async (_name, variables, code, message) => {
      const before = await service.prisma.aiMessage.count({ where: { role: 'user' } });
      const { body } = await chat({ question: 'Explain', clientSubscriptionId: null, ...variables });
      expect(body.errors?.[0]?.extensions?.code).toBe(code);
      expect(body.errors?.[0]?.message).toMatch(message);
      expect(await service.prisma.aiMessage.count({ where: { role: 'user' } })).toBe(before);
    });

    it('a category the seat does not include, naming it', async () => {
      const pro = await userWithToken(service.prisma);
      await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: pro.username });
      const { body } = await chat(
        {
          question: 'Review',
          clientSubscriptionId: null,
          additionalContext: [{ id: 'mr-1', category: 'MERGE_REQUEST', content: 'diff', metadata: {} }],
        },
        pro.token,
      );
      expect(body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(body.errors?.[0]?.message).toMatch(/MERGE_REQUEST context category is not available to you/);
    });

    it('a user without a Duo seat', async () => {
      const nobody = await userWithToken(service.prisma);
      const { body } = await chat({ question: 'Hello', clientSubscriptionId: null }, nobody.token);
      expect(body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    });

    it('a read_api token', async () => {
      const reader = await userWithToken(service.prisma, { scopes: ['read_api'] });
      await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: reader.username });
      const { body } = await chat({ question: 'Hello', clientSubscriptionId: null }, reader.token);
      expect(body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    });

    it('no method argument', async () => {
      const { body } = await service.graphql('mutation { aiAction(input: { clientSubscriptionId: "x" }) { requestId errors } }', {
        token: alice.token,
      });
      expect(body.errors?.[0]?.message).toBe('Only one method argument is required');
    });

    it('a project the user cannot read answers exactly like a missing one', async () => {
      const group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
      const hidden = await projectIn(service.prisma, group);
      const ask = (resourceId: string) => chat({ question: 'Explain the project', clientSubscriptionId: null, resourceId });
      const hiddenAnswer = await ask(`gid://gitlab/Project/${hidden.id}`);
      const missingAnswer = await ask('gid://gitlab/Project/987654321');
      expect(hiddenAnswer.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      expect(hiddenAnswer.body.errors?.[0]).toEqual(missingAnswer.body.errors?.[0]);
    });
  });

  it('answers aiActions sent together each on its own, and a refused one among them stores nothing', async () => {
    const echo = await subscribe(client, { htmlResponse: false, userId: userGid(), aiAction: 'CHAT' });
    const before = await service.prisma.aiMessage.count({ where: { role: 'user' } });
    const questions = ['First of many?', '   ', 'Second of many?', 'Third of many?'];
    const answers = await Promise.all(questions.map((question) => chat({ question, clientSubscriptionId: null })));
    expect(answers[1].body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const accepted = answers.filter((_answer, index) => index !== 1).map((answer) => answer.body.data!.aiAction!.requestId);
    expect(new Set(accepted).size).toBe(3);
    for (const [index, requestId] of accepted.entries()) {
      await echo.untilFinal(requestId);
      const mine = echo.messages.filter((message) => message.requestId === requestId);
      const asked = questions.filter((question) => question.trim())[index];
      expect(mine.map((message) => [message.role, message.chunkId])).toEqual([
        ['USER', null],
        ['ASSISTANT', null],
      ]);
      expect(mine[0].content).toBe(asked);
      expect(mine[1].content).toContain(asked);
    }
    expect(await service.prisma.aiMessage.count({ where: { role: 'user' } })).toBe(before + 3);
    expect(await service.prisma.aiMessage.count({ where: { requestId: { in: accepted } } })).toBe(6);
    echo.stop();
  });

  it('refuses mutations over graphql-ws, where token scopes are not checked', async () => {
    const reader = await userWithToken(service.prisma, { scopes: ['read_api'] });
    const readerClient = wsClient(service.url, reader.token);
    try {
      const errors: unknown[] = [];
      await new Promise<void>((resolve) => {
        readerClient.subscribe(
          { query: 'mutation { aiAction(input: { chat: { content: "sneaky" } }) { requestId } }' },
          {
            next: (result) => errors.push(...(result.errors ?? [])),
            error: (error) => (errors.push(error), resolve()),
            complete: () => resolve(),
          },
        );
      });
      expect(JSON.stringify(errors)).toMatch(/Mutations are not accepted over this socket/);
      expect(await service.prisma.aiMessage.count({ where: { content: 'sneaky' } })).toBe(0);
    } finally {
      await readerClient.dispose();
    }
  });

  it('keeps one user away from another user’s messages and events', async () => {
    const bob = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: bob.username });
    const bobClient = wsClient(service.url, bob.token);
    try {
      const spying = await subscribe(bobClient, { userId: userGid(), aiAction: 'CHAT' });
      await spying.until((messages) => spying.errors.length > 0 || messages.length > 0, 5000).catch(() => undefined);
      expect(JSON.stringify(spying.errors)).toMatch(/only subscribe to your own AI responses/);

      const clientSubscriptionId = crypto.randomUUID();
      const own = await subscribe(bobClient, { userId: `gid://gitlab/User/${bob.id}`, aiAction: 'CHAT', clientSubscriptionId });
      const { body } = await chat({ question: 'Alice private question', clientSubscriptionId: crypto.randomUUID() });
      const aliceRequest = body.data!.aiAction!.requestId;
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(own.messages.filter((message) => message.requestId === aliceRequest)).toEqual([]);

      const read = await service.graphql<{ aiMessages: { nodes: unknown[] } }>(LSP_GET_MESSAGES, {
        token: bob.token,
        variables: { requestIds: [aliceRequest] },
      });
      expect(read.body.data!.aiMessages.nodes).toEqual([]);
      own.stop();
    } finally {
      await bobClient.dispose();
    }
  });

  it('a newer request on the same clientSubscriptionId supersedes one still streaming', async () => {
    stub.script({ kind: 'stream', pieces: Array.from({ length: 40 }, (_value, index) => `slow${index} `), delayMs: 50 });
    const clientSubscriptionId = crypto.randomUUID();
    const stream = await subscribe(client, { userId: userGid(), aiAction: 'CHAT', clientSubscriptionId });
    const first = (await chat({ question: 'first question', clientSubscriptionId })).body.data!.aiAction!.requestId;
    await stream.until((messages) => messages.filter((message) => message.requestId === first).length >= 3);
    const second = (await chat({ question: 'second question', clientSubscriptionId })).body.data!.aiAction!.requestId;
    await stream.untilFinal(second);
    const settled = stream.messages.filter((message) => message.requestId === first).length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    const firstMessages = stream.messages.filter((message) => message.requestId === first);
    expect(firstMessages.length).toBe(settled);
    expect(firstMessages.some((message) => message.chunkId === null)).toBe(false);
    expect(firstMessages.length).toBeLessThan(40);
    expect(await service.prisma.aiMessage.count({ where: { requestId: first, role: 'assistant' } })).toBe(0);
    expect(await stub.requests[0].ended).toBe('client-closed');
    stream.stop();
  });

  it('retries a 500 from the model and answers', async () => {
    stub.script({ kind: 'status', status: 500 });
    const clientSubscriptionId = crypto.randomUUID();
    const stream = await subscribe(client, { userId: userGid(), aiAction: 'CHAT', clientSubscriptionId });
    const requestId = (await chat({ question: 'retry me', clientSubscriptionId })).body.data!.aiAction!.requestId;
    const final = (await stream.untilFinal(requestId)).find((message) => message.chunkId === null)!;
    expect(final.errors).toEqual([]);
    expect(final.content).toContain('retry me');
    expect(stub.requests).toHaveLength(2);
    stream.stop();
  });

  it('turns a model that never answers into a final message with error code A1000', async () => {
    stub.script({ kind: 'hang' }, { kind: 'hang' }, { kind: 'hang' });
    const clientSubscriptionId = crypto.randomUUID();
    const stream = await subscribe(client, { userId: userGid(), aiAction: 'CHAT', clientSubscriptionId });
    const requestId = (await chat({ question: 'anyone there?', clientSubscriptionId })).body.data!.aiAction!.requestId;
    const final = (await stream.untilFinal(requestId, 20_000)).find((message) => message.chunkId === null)!;
    expect(final.errors[0]).toMatch(/Error code: A1000$/);
    expect(final.content).toBe(final.errors[0]);
    const stored = await service.prisma.aiMessage.findFirstOrThrow({ where: { requestId, role: 'assistant' } });
    expect(stored.errors).toEqual(final.errors);
    stream.stop();
  }, 30_000);

  it('/reset and /clear call no model', async () => {
    await chat({ question: 'remember me', clientSubscriptionId: null });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const calls = stub.requests.length;
    await chat({ question: '/reset', clientSubscriptionId: null });
    await chat({ question: '/clear', clientSubscriptionId: null });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(stub.requests.length).toBe(calls);
    const { body } = await service.graphql<{ aiMessages: { nodes: unknown[] } }>(LSP_GET_MESSAGES, { token: alice.token, variables: {} });
    expect(body.data!.aiMessages.nodes).toEqual([]);
  });

  it('keeps threads: a DUO_CHAT conversation has its own history and can be listed', async () => {
    const first = await service.graphql<{ aiAction: { requestId: string; threadId: string } }>(
      'mutation { aiAction(input: { chat: { content: "thread question one" }, conversationType: DUO_CHAT }) { requestId threadId errors ' +
        '} }',
      { token: alice.token },
    );
    const threadId = first.body.data!.aiAction.threadId;
    expect(threadId).toMatch(/^gid:\/\/gitlab\/Ai::Conversation::Thread\/\d+$/);
    const threads = await service.graphql<{ aiConversationThreads: { nodes: Array<{ id: string; title: string }> } }>(
      '{ aiConversationThreads(conversationType: DUO_CHAT) { nodes { id title conversationType } } }',
      { token: alice.token },
    );
    expect(threads.body.data!.aiConversationThreads.nodes[0]).toMatchObject({ id: threadId, title: 'thread question one' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const second = await service.graphql<{ aiAction: { requestId: string } }>(
      'mutation($thread: AiConversationThreadID) { aiAction(input: { chat: { content: "thread question two" }, threadId: $thread }) { ' +
        'requestId errors } }',
      { token: alice.token, variables: { thread: threadId } },
    );
    expect(second.body.errors).toBeUndefined();
    const deadline = Date.now() + 5000;
    while (
      Date.now() < deadline &&
      !(await service.prisma.aiMessage.findFirst({ where: { requestId: second.body.data!.aiAction.requestId, role: 'assistant' } }))
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The second prompt carried the first turn as history.
    const lastCall = stub.requests[stub.requests.length - 1].body.messages!.map((message) => String(message.content));
    expect(lastCall.some((content) => content.includes('thread question one'))).toBe(true);
    const read = await service.graphql<{ aiMessages: { nodes: Array<{ content: string }> } }>(
      `query($thread: AiConversationThreadID) { aiMessages(threadId: $thread, roles: [USER]) { nodes { content } } }`,
      { token: alice.token, variables: { thread: threadId } },
    );
    expect(read.body.data!.aiMessages.nodes.map((node) => node.content)).toEqual(['thread question one', 'thread question two']);
  });

  it("gives the model the conversation's last 50 messages, as GitLab does", async () => {
    const bob = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: bob.username });
    // 60 earlier turns, oldest first: "turn 1" a minute ago ... "turn 60" a second ago.
    await service.prisma.$executeRaw`
      INSERT INTO ai_messages (id, user_id, thread_id, request_id, role, content, created_at)
      SELECT gen_random_uuid(), ${bob.id}, NULL, gen_random_uuid(),
             (CASE WHEN n % 2 = 1 THEN 'user' ELSE 'assistant' END)::ai_message_role, 'turn ' || n, now() - (61 - n) * interval '1 second'
        FROM generate_series(1, 60) AS n`;
    const calls = stub.requests.length;
    const { body } = await chat({ question: 'and the next one?', clientSubscriptionId: null }, bob.token);
    expect(body.errors).toBeUndefined();
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && stub.requests.length === calls) await new Promise((resolve) => setTimeout(resolve, 50));
    const sent = stub.requests[calls].body.messages!.map((message) => String(message.content));
    // System prompt, turns 11 to 60 in order, then the question.
    expect(sent.slice(1, -1)).toEqual(Array.from({ length: 50 }, (_, index) => `turn ${index + 11}`));
    expect(sent.at(-1)).toContain('and the next one?');
  });

  it('records feedback on an answer and marks it', async () => {
    const clientSubscriptionId = crypto.randomUUID();
    const stream = await subscribe(client, { userId: userGid(), aiAction: 'CHAT', clientSubscriptionId });
    const requestId = (await chat({ question: 'rate me', clientSubscriptionId })).body.data!.aiAction!.requestId;
    const final = (await stream.untilFinal(requestId)).find((message) => message.chunkId === null)!;
    const { body } = await service.graphql(
      'mutation($id: String!) { duoUserFeedback(input: { aiMessageId: $id, trackingEvent: { category: "ask_gitlab_chat", action: ' +
        '"click_button", label: "response_feedback", property: "helpful", extra: { improveWhat: "nothing", secret: "dropped" } } }) { ' +
        'errors } }',
      { token: alice.token, variables: { id: final.id } },
    );
    expect(body).toEqual({ data: { duoUserFeedback: { errors: [] } } });
    const read = await service.graphql<{ aiMessages: { nodes: Array<{ extras: { hasFeedback: boolean } }> } }>(
      'query($ids: [ID!]) { aiMessages(requestIds: $ids, roles: [ASSISTANT]) { nodes { extras { hasFeedback } } } }',
      { token: alice.token, variables: { ids: [requestId] } },
    );
    expect(read.body.data!.aiMessages.nodes[0].extras.hasFeedback).toBe(true);
    const stored = await service.prisma.aiMessageFeedback.findFirstOrThrow({ where: { messageId: final.id! } });
    expect(stored.details).toMatchObject({ property: 'helpful', extra: { improveWhat: 'nothing' } });
    expect(JSON.stringify(stored.details)).not.toContain('secret');
    stream.stop();
  });

  it('renders contentHtml only for the messages of the page, and only when the document asks for it', async () => {
    const bob = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: bob.username });
    // 24 long answers (580 KB of links each, about 0.6 s each to render): rendering them all on every aiMessages
    // held the API for ~15 s a call.
    const content = 'http://example.com/a '.repeat(27_600);
    await service.prisma.aiMessage.createMany({
      data: Array.from({ length: 24 }, () => ({
        id: crypto.randomUUID(),
        userId: bob.id,
        requestId: crypto.randomUUID(),
        role: 'assistant' as const,
        content,
      })),
    });
    type Nodes = { aiMessages: { nodes: Array<{ content: string; contentHtml?: string }> } };
    const plain = await service.graphql<Nodes>('{ aiMessages { nodes { content } } }', { token: bob.token });
    expect(plain.body.data!.aiMessages.nodes).toHaveLength(24);
    const page = await service.graphql<Nodes>('{ aiMessages(first: 1) { nodes { contentHtml } } }', { token: bob.token });
    expect(page.body.data!.aiMessages.nodes).toHaveLength(1);
    const html = page.body.data!.aiMessages.nodes[0].contentHtml!;
    expect(html.startsWith('<p><a href="http://example.com/a" rel="noopener noreferrer nofollow">http://example.com/a</a> <a href')).toBe(
      true,
    );
  }, 15_000);
});
