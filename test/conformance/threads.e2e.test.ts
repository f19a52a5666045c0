import { createLspCable, subscribeLikeLsp } from '../helpers/cable-clients';
import { subscribe, wsClient, type StreamedMessage } from '../helpers/chat-client';
import type { UserWithToken } from '../helpers/fixtures';
import type { StubLlmServer } from '../helpers/stub-llm-server';
import type { TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';
import { graphqlFixturesOf, startConformanceService, type ConformanceService } from './conformance-service';
import { fill, type Fixture } from './fixture-format';

// Conversations in threads, as GitLab's clients hold them, with the fixtures' exact documents: a
// request that needs an earlier answer (the thread's id, a message's id) cannot be a fixture of its
// own, so the chains are here.
// - VS Code's Quick Chat (extension 6.61.1, sent to 17.10+): chat-17.10 with DUO_QUICK_CHAT, then a
//   follow-up with the first answer's threadId; answers over ActionCable.
// - Web Duo Chat as GitLab master sends it (18.1+ texts, beyond the version we report, so the
//   runner only validates them): chat in a thread, both subscriptions with threadId, the thread
//   list, the thread's history, feedback, deletion; chatWithNamespace.

type Thread = { id: string; conversationType: string; title: string | null };
type HistoryMessage = {
  id: string;
  requestId: string;
  content: string;
  role: string;
  errors: string[];
  extras: { sources: unknown[]; hasFeedback: boolean } | null;
};
type ActionAnswer = { aiAction: { requestId: string; errors: string[]; threadId: string | null } };
type Body<Data> = { data?: Data | null; errors?: Array<{ message: string }> };
type CableMessage = { result?: { data?: { aiCompletionResponse: StreamedMessage | null } } };
const THREAD_GID = /^gid:\/\/gitlab\/Ai::Conversation::Thread\/\d+$/;

const vscode = graphqlFixturesOf('gitlab-vscode-extension');
const lsp = graphqlFixturesOf('gitlab-lsp');
const web = graphqlFixturesOf('gitlab-web');

const until = (check: () => boolean) => waitUntil(check, { timeoutMs: 20_000, intervalMs: 20 });

// Standalone, and connected to GitLab (the stand-in).
describe.each([
  ['standalone', false],
  ['connected to GitLab', true],
])("conversations in threads, as GitLab's clients hold them (%s)", (_mode, connected) => {
  let world: ConformanceService;
  let stub: StubLlmServer;
  let service: TestService;
  let alice: UserWithToken;
  let values: Record<string, unknown>;

  beforeAll(async () => {
    world = await startConformanceService('duo_enterprise', {}, { gitlab: connected });
    ({ stub, service, alice } = world);
    values = {
      'user.gid': `gid://gitlab/User/${alice.id}`,
      'project.gid': `gid://gitlab/Project/${world.project.id}`,
      'group.gid': `gid://gitlab/Group/${world.group.id}`,
    };
  });
  afterAll(async () => world?.close());
  afterEach(() => expect(world.gitlab?.violations ?? []).toEqual([]));

  /** POSTs a fixture's document with its variables (placeholders filled), `overrides` on top; undefined ones are left out. */
  async function send<Data>(fixture: Fixture, overrides: Record<string, unknown> = {}): Promise<Body<Data>> {
    const own = Object.fromEntries(Object.entries(fixture.variables ?? {}).filter(([name]) => !(name in overrides)));
    const variables = { ...fill(own, { ...values, clientSubscriptionId: crypto.randomUUID() }), ...overrides };
    const response = await fetch(`${service.url}/api/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${alice.token}` },
      body: JSON.stringify({ query: fixture.document, variables, operationName: fixture.operationName ?? undefined }),
    });
    return (await response.json()) as Body<Data>;
  }
  async function data<Data>(fixture: Fixture, overrides: Record<string, unknown> = {}): Promise<Data> {
    const body = await send<Data>(fixture, overrides);
    expect(body.errors).toBeUndefined();
    expect(body.data).toBeTruthy();
    return body.data!;
  }
  const history = async (threadId: string) =>
    (await data<{ aiMessages: { nodes: HistoryMessage[] } }>(web.getAiMessagesWithThread, { threadId })).aiMessages.nodes;
  const threadList = async (fixture: Fixture) =>
    (await data<{ aiConversationThreads: { nodes: Thread[] } }>(fixture)).aiConversationThreads.nodes;

  it('VS Code Quick Chat: the first question opens a Quick Chat thread, the follow-up lands in it', async () => {
    const cableUrl = `${service.url.replace(/^http/, 'ws')}/-/cable`;
    /** One Quick Chat turn as the extension runs it: a cable per question, subscribed first, then chat-17.10. */
    const turn = async (fixture: Fixture, overrides: Record<string, unknown>) => {
      const clientSubscriptionId = crypto.randomUUID();
      const cable = await createLspCable(cableUrl, alice.token);
      try {
        // The extension's subscription (ai_completion_response_channel.ts) is the language server's text, indented differently.
        const { messages } = await subscribeLikeLsp(cable, {
          query: lsp.aiCompletionResponse.document!,
          variables: { htmlResponse: false, userId: values['user.gid'], aiAction: 'CHAT', clientSubscriptionId },
          operationName: 'aiCompletionResponse',
        });
        const { aiAction } = await data<ActionAnswer>(fixture, { clientSubscriptionId, ...overrides });
        expect(aiAction.errors).toEqual([]);
        const received = () =>
          (messages as CableMessage[])
            .map((message) => message.result?.data?.aiCompletionResponse)
            .filter((message): message is StreamedMessage => Boolean(message) && message!.requestId === aiAction.requestId);
        await until(() => received().some((message) => message.role === 'ASSISTANT' && message.chunkId === null));
        const final = received().find((message) => message.role === 'ASSISTANT' && message.chunkId === null)!;
        expect(final.errors).toEqual([]);
        return { aiAction, final };
      } finally {
        cable.disconnect();
      }
    };

    const first = await turn(vscode['chat-17.10'], {});
    expect(first.aiAction.threadId).toMatch(THREAD_GID);
    expect(first.final.content).toContain('What does this function return?');

    const followUp = await turn(vscode['chat-17.10-followUp'], { threadId: first.aiAction.threadId });
    expect(followUp.aiAction.threadId).toBe(first.aiAction.threadId);
    // The follow-up's prompt carried the thread's first turn.
    const prompt = JSON.stringify(stub.requests.at(-1)!.body.messages);
    expect(prompt).toContain('What does this function return?');
    expect(prompt).toContain('And what if name is empty?');

    // The thread holds both turns, in order (read with the query GitLab's UIs read a thread with:
    // the extension itself reads none, it takes the answers from the cable).
    const messages = await history(first.aiAction.threadId!);
    expect(messages.map((message) => [message.role, message.requestId])).toEqual([
      ['USER', first.aiAction.requestId],
      ['ASSISTANT', first.aiAction.requestId],
      ['USER', followUp.aiAction.requestId],
      ['ASSISTANT', followUp.aiAction.requestId],
    ]);
    expect(messages[2].content).toBe('And what if name is empty?');
    expect(messages[3].content).toBe(followUp.final.content);

    // The extension's polling fallback (getAiMessages by request id, no thread) reads the legacy
    // conversation, as GitLab's ThreadEnsurer does, so it finds no Quick Chat message (the
    // extension's comment: "threadId is required to retrieve messages for DUO_QUICK_CHAT").
    const polled = await data<{ aiMessages: { nodes: unknown[] } }>(lsp['getAiMessages-17.5'], {
      requestIds: [first.aiAction.requestId],
      roles: ['ASSISTANT'],
    });
    expect(polled.aiMessages.nodes).toEqual([]);

    // The web's thread list: the old text lists the Quick Chat thread too, the current one does not.
    expect(await threadList(web.getAiConversationThreads)).toContainEqual(
      expect.objectContaining({ id: first.aiAction.threadId, conversationType: 'DUO_QUICK_CHAT' }),
    );
    expect((await threadList(web['getAiConversationThreads-18.3'])).map((thread) => thread.id)).not.toContain(first.aiAction.threadId);
  });

  it('web Duo Chat (GitLab master): a thread started, continued, rated and deleted', async () => {
    const client = wsClient(service.url, alice.token);
    const clientSubscriptionId = crypto.randomUUID();
    const userId = values['user.gid'];
    // tanuki_bot_subscriptions.vue: the messages (userId, aiAction CHAT) and the chunks (userId, the app's clientSubscriptionId).
    const messages = await subscribe(client, { userId, aiAction: 'CHAT' }, web['aiCompletionResponse-18.1'].document);
    const chunks = await subscribe(client, { userId, clientSubscriptionId }, web['aiCompletionResponseStream-18.1'].document);
    type Threaded = StreamedMessage & { threadId: string | null };
    try {
      // A new chat on a page without a namespace: chat, DUO_CHAT, no threadId yet.
      const first = (await data<ActionAnswer>(web['chat-18.1'], { clientSubscriptionId })).aiAction;
      expect(first.errors).toEqual([]);
      expect(first.threadId).toMatch(THREAD_GID);
      const answered = (await messages.untilFinal(first.requestId, 20_000)) as Threaded[];
      const streamed = (await chunks.untilFinal(first.requestId, 20_000)) as Threaded[];
      expect(messages.errors).toEqual([]);
      expect(chunks.errors).toEqual([]);
      // The app drops every message whose threadId is not the active thread's: each must name it.
      const all = [...answered, ...streamed];
      expect(all.map((message) => message.threadId)).toEqual(all.map(() => first.threadId));
      const final = answered.find((message) => message.role === 'ASSISTANT' && message.chunkId === null)!;
      const pieces = streamed.filter((message) => message.chunkId !== null);
      expect(pieces.length).toBeGreaterThan(0);
      expect(pieces.map((piece) => piece.content).join('')).toBe(final.content);

      // The next question in the active thread.
      const second = (await data<ActionAnswer>(web['chat-18.1-followUp'], { clientSubscriptionId, threadId: first.threadId })).aiAction;
      expect(second.errors).toEqual([]);
      expect(second.threadId).toBe(first.threadId);
      const secondAnswer = (await messages.untilFinal(second.requestId, 20_000)) as Threaded[];
      expect(secondAnswer.every((message) => message.threadId === first.threadId)).toBe(true);
      expect(JSON.stringify(stub.requests.at(-1)!.body.messages)).toContain('How do I write a test?');

      // The history: the thread, first in the Duo Chat list, titled by its first question.
      const threads = await threadList(web['getAiConversationThreads-18.3']);
      expect(threads[0]).toEqual(expect.objectContaining({ id: first.threadId, conversationType: 'DUO_CHAT' }));
      expect(threads[0].title).toMatch(/^How do I write a test\?/);
      expect(threads.every((thread) => thread.conversationType === 'DUO_CHAT')).toBe(true);
      const before = await history(first.threadId!);
      expect(before.map((message) => [message.role, message.requestId])).toEqual([
        ['USER', first.requestId],
        ['ASSISTANT', first.requestId],
        ['USER', second.requestId],
        ['ASSISTANT', second.requestId],
      ]);

      // Feedback on the first answer, by the id the history and the subscription give it.
      expect(before[1].id).toBe(final.id);
      const rated = await data<{ duoUserFeedback: { errors: string[] } }>(web.duoUserFeedback, {
        input: { ...(web.duoUserFeedback.variables!.input as Record<string, unknown>), aiMessageId: before[1].id },
      });
      expect(rated.duoUserFeedback.errors).toEqual([]);
      expect((await history(first.threadId!)).map((message) => message.extras?.hasFeedback)).toEqual([false, true, false, false]);

      // Deleted: gone from the list, and its history no longer readable.
      const deleted = await data<{ deleteConversationThread: { success: boolean; errors: string[] } }>(web.deleteConversationThread, {
        input: { threadId: first.threadId },
      });
      expect(deleted.deleteConversationThread).toEqual({ success: true, errors: [] });
      expect((await threadList(web['getAiConversationThreads-18.3'])).map((thread) => thread.id)).not.toContain(first.threadId);
      const gone = await send(web.getAiMessagesWithThread, { threadId: first.threadId });
      expect(gone.errors?.length).toBeGreaterThan(0);
    } finally {
      messages.stop();
      chunks.stop();
      await client.dispose();
    }
  });

  // The web sends the page's top-level group as gid://gitlab/Group/<id>: GitLab's NamespaceID
  // (GlobalIDType[::Namespace]) takes any kind of namespace. The request is sent from 18.2.
  it('web Duo Chat on a project page: chatWithNamespace with the top-level group', async () => {
    const body = await send<ActionAnswer>(web.chatWithNamespace);
    expect(body.errors).toBeUndefined();
    expect(body.data!.aiAction.errors).toEqual([]);
    expect(body.data!.aiAction.threadId).toMatch(THREAD_GID);
  });

  it("web Duo Chat's availability check for its chat widgets", async () => {
    const { currentUser } = await data<{ currentUser: { id: string; duoChatAvailable: boolean } }>(web.duoChatAvailable);
    expect(currentUser).toEqual({ id: values['user.gid'], duoChatAvailable: true });
  });
});
