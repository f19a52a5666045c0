import { createLspCable, subscribeLikeLsp } from '../helpers/cable-clients';
import type { UserWithToken } from '../helpers/fixtures';
import type { StubLlmServer } from '../helpers/stub-llm-server';
import type { TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';
import { BILLING_FILES, createGitRepo, type GitRepo } from '../helpers/git-repo';
import { CONTEXT_CATEGORIES } from '../../src/config';
import { GITLAB_VERSION } from '../../src/instance';
import { STAND_IN_GITLAB_VERSION } from '../helpers/gitlab-stand-in';
import { graphqlFixturesOf, startConformanceService, type ConformanceService } from './conformance-service';
import type { Fixture } from './fixture-format';

// A chat started exactly as GitLab's language server starts one, with the documents of the
// conformance fixtures: version, getUser, the Duo feature probe, instance feature flags, the
// ActionCable subscription, the chat mutation with additionalContext, then getAiMessages. And the
// same chat when the instance offers no context category: the language server then sends the
// documents without additionalContext (aiCompletionResponse-noContext, chat-17.3), at any version.

type Message = {
  id: string | null;
  requestId: string;
  content: string;
  role: string;
  chunkId: number | null;
  errors: string[];
  extras: { sources: unknown[]; additionalContext: Array<{ id: string; category: string; metadata: unknown }> } | null;
};
type CableMessage = { result?: { data?: { aiCompletionResponse: Message | null }; errors?: unknown[] }; more?: boolean };

const lsp = graphqlFixturesOf('gitlab-lsp');

const GREETING = {
  id: 'file:///workspace/src/greeting.ts',
  category: 'FILE',
  content: 'export const greet = (name: string) => `Hello, ${name}`;',
  metadata: { title: 'greeting.ts', enabled: true, relativePath: 'src/greeting.ts', subType: 'open_tab', icon: 'document' },
};

const until = (check: () => boolean) => waitUntil(check, { timeoutMs: 20_000, intervalMs: 20 });

type Send = <Data>(fixture: Fixture, variables: Record<string, unknown>) => Promise<Data>;

/** The polling fallback's read (the language server's getAiMessages at 17.5 and later) finds the streamed answer stored. */
async function expectStoredAnswer(send: Send, requestId: string, content: string): Promise<void> {
  const answered = await send<{ aiMessages: { nodes: Message[] } }>(lsp['getAiMessages-17.5'], {
    requestIds: [requestId],
    roles: ['ASSISTANT'],
  });
  expect(answered.aiMessages.nodes.map((node) => node.content)).toEqual([content]);
}

// Standalone, and connected to GitLab (the stand-in): alice's GitLab token through the same flow.
describe.each([
  ['standalone', false],
  ['connected to GitLab', true],
])("a chat started as GitLab's language server starts one (%s)", (_mode, connected) => {
  let world: ConformanceService;
  let stub: StubLlmServer;
  let service: TestService;
  let alice: UserWithToken;

  beforeAll(async () => {
    world = await startConformanceService('duo_pro', {}, { gitlab: connected });
    ({ stub, service, alice } = world);
  });
  afterAll(async () => world?.close());
  afterEach(() => expect(world.gitlab?.violations ?? []).toEqual([]));

  /** POSTs a fixture's document as the language server does (graphql-request: query, variables). */
  async function send<Data>(fixture: Fixture, variables: Record<string, unknown>): Promise<Data> {
    const response = await fetch(`${service.url}/api/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${alice.token}`,
        'user-agent': 'gitlab-language-server:8.0.0 (vscode:1.99.0)',
      },
      body: JSON.stringify({ query: fixture.document, variables }),
    });
    const body = (await response.json()) as { data?: Data; errors?: unknown[] };
    expect(body.errors).toBeUndefined();
    return body.data!;
  }

  it('gets the streamed answer and its context items', async () => {
    const version = (await (
      await fetch(`${service.url}/api/v4/version`, { headers: { authorization: `Bearer ${alice.token}` } })
    ).json()) as { version: string };
    // Connected, the version is GitLab's (passed on): the language server picks its documents by it.
    expect(version.version).toBe(connected ? STAND_IN_GITLAB_VERSION : GITLAB_VERSION);

    const { currentUser } = await send<{ currentUser: { id: string; username: string; avatarUrl: string; webUrl: string } }>(
      lsp.getUser,
      {},
    );
    expect(currentUser.id).toBe(`gid://gitlab/User/${alice.id}`);
    const features = await send<{ currentUser: { duoChatAvailableFeatures: string[]; codeSuggestionsContexts: string[] } }>(
      lsp.getDuoAvailableFeatures,
      {},
    );
    // The chat offers file context, and sends additionalContext at all, only when this lists it.
    expect(features.currentUser.duoChatAvailableFeatures).toContain('include_file_context');
    const flags = await send<{ metadata: { featureFlags: Array<{ name: string; enabled: boolean }> } }>(
      lsp.featureFlagsEnabled,
      lsp.featureFlagsEnabled.variables!,
    );
    expect(flags.metadata.featureFlags.find((flag) => flag.name === 'duo_workflow')).toEqual({ name: 'duo_workflow', enabled: false });

    const cable = await createLspCable(`${service.url.replace(/^http/, 'ws')}/-/cable`, alice.token);
    try {
      const clientSubscriptionId = crypto.randomUUID();
      const { messages } = await subscribeLikeLsp(cable, {
        query: lsp.aiCompletionResponse.document!,
        variables: { htmlResponse: false, userId: currentUser.id, aiAction: 'CHAT', clientSubscriptionId },
        operationName: 'aiCompletionResponse',
      });
      const { aiAction } = await send<{ aiAction: { requestId: string; errors: string[] } }>(lsp['chat-17.5'], {
        question: 'What does greet return?',
        resourceId: null,
        currentFileContext: {
          fileName: 'src/app.ts',
          selectedText: '',
          contentAboveCursor: 'import { greet } from "./greeting";\n',
          contentBelowCursor: '',
        },
        clientSubscriptionId,
        platformOrigin: 'vs_code_extension',
        additionalContext: [GREETING],
      });
      expect(aiAction.errors).toEqual([]);
      const received = () =>
        (messages as CableMessage[])
          .map((message) => message.result?.data?.aiCompletionResponse)
          .filter((message): message is Message => Boolean(message));
      await until(() => received().some((message) => message.requestId === aiAction.requestId && message.chunkId === null));

      const mine = received().filter((message) => message.requestId === aiAction.requestId);
      const chunks = mine.filter((message) => message.chunkId !== null);
      const final = mine.find((message) => message.chunkId === null)!;
      expect(chunks.length).toBeGreaterThan(1);
      expect(chunks.map((chunk) => chunk.chunkId)).toEqual(chunks.map((_chunk, index) => index + 1));
      expect(chunks.map((chunk) => chunk.content).join('')).toBe(final.content);
      expect(final.role).toBe('ASSISTANT');
      expect(final.errors).toEqual([]);
      expect(final.content).toContain('What does greet return?');
      // The attached file reached the model.
      expect(JSON.stringify(stub.requests.at(-1)!.body.messages)).toContain('Hello, ${name}');

      // The polling fallback and the history read the same request, with its context items.
      const asked = await send<{ aiMessages: { nodes: Message[] } }>(lsp['getAiMessages-17.5'], {
        requestIds: [aiAction.requestId],
        roles: ['USER'],
      });
      expect(asked.aiMessages.nodes).toHaveLength(1);
      expect(asked.aiMessages.nodes[0].extras!.additionalContext).toEqual([
        { id: GREETING.id, category: 'FILE', metadata: expect.objectContaining({ relativePath: 'src/greeting.ts' }) },
      ]);
      await expectStoredAnswer(send, aiAction.requestId, final.content);
    } finally {
      cable.disconnect();
    }
  });
});

describe('a chat from the language server when the instance offers no context category', () => {
  let world: ConformanceService;

  beforeAll(async () => {
    world = await startConformanceService('duo_pro', { DUO_DISABLED_CONTEXT_CATEGORIES: CONTEXT_CATEGORIES.join(',') });
  });
  afterAll(async () => world?.close());

  it('streams the answer to the subscription without additionalContext, asked with the mutation without it', async () => {
    const { service, alice } = world;
    const send = async <Data>(fixture: Fixture, variables: Record<string, unknown>): Promise<Data> => {
      const { body } = await service.graphql<Data>(fixture.document!, { token: alice.token, variables });
      expect(body.errors).toBeUndefined();
      return body.data!;
    };
    // What makes the language server choose the documents without additionalContext.
    const features = await send<{ currentUser: { duoChatAvailableFeatures: string[] } }>(lsp.getDuoAvailableFeatures, {});
    expect(features.currentUser.duoChatAvailableFeatures).toEqual([]);

    const cable = await createLspCable(`${service.url.replace(/^http/, 'ws')}/-/cable`, alice.token);
    try {
      const clientSubscriptionId = crypto.randomUUID();
      const userId = `gid://gitlab/User/${alice.id}`;
      const { messages } = await subscribeLikeLsp(cable, {
        query: lsp['aiCompletionResponse-noContext'].document!,
        variables: { htmlResponse: false, userId, aiAction: 'CHAT', clientSubscriptionId },
        operationName: 'aiCompletionResponse',
      });
      const { aiAction } = await send<{ aiAction: { requestId: string; errors: string[] } }>(lsp['chat-17.3'], {
        question: 'What does greet return?',
        resourceId: null,
        currentFileContext: { fileName: 'src/app.ts', selectedText: 'greet("a")', contentAboveCursor: '', contentBelowCursor: '' },
        clientSubscriptionId,
        platformOrigin: 'vs_code_extension',
      });
      expect(aiAction.errors).toEqual([]);
      const mine = () =>
        (messages as CableMessage[])
          .map((message) => message.result?.data?.aiCompletionResponse)
          .filter((message): message is Message => message?.requestId === aiAction.requestId);
      await until(() => mine().some((message) => message.chunkId === null));
      const final = mine().find((message) => message.chunkId === null)!;
      expect(final.role).toBe('ASSISTANT');
      expect(final.errors).toEqual([]);
      expect(final.content).toContain('What does greet return?');
      expect(final.extras).toEqual({ sources: [] });
      expect(mine().filter((message) => message.chunkId !== null).length).toBeGreaterThan(0);
      // The language server reads messages with the 17.5 document at 17.5 and later, context or not.
      await expectStoredAnswer(send, aiAction.requestId, final.content);
    } finally {
      cable.disconnect();
    }
  });
});

describe('the first question the language server asks about a repository not indexed yet', () => {
  let world: ConformanceService;
  let repo: GitRepo;

  beforeAll(async () => {
    world = await startConformanceService('duo_enterprise', { INDEX_DEBOUNCE_MS: '0' });
    repo = createGitRepo(BILLING_FILES);
    await world.service.prisma.project.update({ where: { id: world.project.id }, data: { repositoryUrl: repo.path } });
  });
  afterAll(async () => {
    await world?.close();
    repo?.destroy();
  });

  it('streams how far its indexing is over ActionCable, then answers with the code and its citations', async () => {
    const { service, alice, project, stub } = world;
    const send = async <Data>(fixture: Fixture, variables: Record<string, unknown>): Promise<Data> => {
      const { body } = await service.graphql<Data>(fixture.document!, { token: alice.token, variables });
      expect(body.errors).toBeUndefined();
      return body.data!;
    };
    const features = await send<{ currentUser: { duoChatAvailableFeatures: string[] } }>(lsp.getDuoAvailableFeatures, {});
    expect(features.currentUser.duoChatAvailableFeatures).toContain('include_repository_context');
    // A fresh service: nothing was indexed before the question.
    expect(await service.prisma.codeIndex.count({ where: { projectId: project.id } })).toBe(0);

    const cable = await createLspCable(`${service.url.replace(/^http/, 'ws')}/-/cable`, alice.token);
    try {
      const clientSubscriptionId = crypto.randomUUID();
      const userId = `gid://gitlab/User/${alice.id}`;
      const { messages } = await subscribeLikeLsp(cable, {
        query: lsp.aiCompletionResponse.document!,
        variables: { htmlResponse: false, userId, aiAction: 'CHAT', clientSubscriptionId },
        operationName: 'aiCompletionResponse',
      });
      const { aiAction } = await send<{ aiAction: { requestId: string; errors: string[] } }>(lsp['chat-17.5'], {
        question: 'Where is the VAT amount computed for an invoice line?',
        resourceId: null,
        currentFileContext: null,
        clientSubscriptionId,
        platformOrigin: 'vs_code_extension',
        additionalContext: [
          { id: project.fullPath, category: 'REPOSITORY', content: '', metadata: { enabled: true, title: project.fullPath } },
        ],
      });
      expect(aiAction.errors).toEqual([]);
      const mine = () =>
        (messages as CableMessage[])
          .map((message) => message.result?.data?.aiCompletionResponse)
          .filter((message): message is Message => message?.requestId === aiAction.requestId);
      await waitUntil(() => mine().some((message) => message.chunkId === null), { timeoutMs: 45_000, intervalMs: 50 });
      const final = mine().find((message) => message.chunkId === null)!;
      const chunks = mine().filter((message) => message.chunkId !== null);
      expect(chunks[0].content).toMatch(new RegExp(`^_(Waiting for an indexing worker for|Indexing) ${project.fullPath}`));
      expect(final.role).toBe('ASSISTANT');
      expect(final.errors).toEqual([]);
      expect(final.content).not.toMatch(/indexing has started|still being indexed/);
      // Citations: the code the answer was grounded in, which the model saw.
      const sources = final.extras!.sources as Array<{ path: string; startLine: number; endLine: number }>;
      expect(sources.map((source) => source.path)).toContain('src/billing/tax.ts');
      expect(JSON.stringify(stub.requests.at(-1)!.body.messages)).toContain('computeVatAmount');
      await expectStoredAnswer(send, aiAction.requestId, final.content);
    } finally {
      cable.disconnect();
    }
  });
});
