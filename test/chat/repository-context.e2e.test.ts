import type { Project } from '../../src/db/prisma';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { LSP_CHAT_MUTATION, LSP_GET_MESSAGES, subscribe, wsClient, type Collector } from '../helpers/chat-client';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { BILLING_FILES, createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { scopeChecks, sentStatements } from '../helpers/sent-statements';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitForIndex } from '../helpers/wait';

// The language server's mutation, with the gatekeeper skipped: these tests are about context, not prompt clarity.
const CHAT = `mutation chat($question: String!, $clientSubscriptionId: String, $platformOrigin: String!, $additionalContext:
[AiAdditionalContextInput!]) {
  aiAction(input: { chat: { content: $question, additionalContext: $additionalContext, skipGatekeeper: true }, clientSubscriptionId:
  $clientSubscriptionId, platformOrigin: $platformOrigin }) { requestId errors }
}`;

type Source = {
  path: string;
  startLine: number;
  endLine: number;
  blobId: string;
  commitSha: string;
  score: number;
  projectPath: string;
  ref: string;
};

// Repository and directory context through the chat flow: aiAction over HTTP, the worker running
// the Semantic Search Tool on the real index, the stub model seeing the code, sources in the answer.
describe('repository and directory context in chat', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let repo: GitRepo;
  let project: Project;
  let user: UserWithToken;
  let client: ReturnType<typeof wsClient>;
  let stream: Collector;
  let clientSubscriptionId: string;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
    service = await startTestService({
      role: 'all',
      env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub', INDEX_DEBOUNCE_MS: '0' },
    });
    repo = createGitRepo(BILLING_FILES);
    user = await userWithToken(service.prisma);
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    project = (await createProject(service.prisma, { fullPath: `${group}/${unique('shop')}`, repository: repo.path })).project;
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
    client = wsClient(service.url, user.token);
    clientSubscriptionId = crypto.randomUUID();
    stream = await subscribe(client, {
      userId: `gid://gitlab/User/${user.id}`,
      clientSubscriptionId,
      aiAction: 'CHAT',
      htmlResponse: false,
    });
  });
  afterAll(async () => {
    stream.stop();
    await client.dispose();
    await service.close();
    await stub.close();
    repo.destroy();
  });

  async function ask(question: string, additionalContext: unknown[], token = user.token) {
    const { body } = await service.graphql<{ aiAction: { requestId: string; errors: string[] } }>(CHAT, {
      token,
      variables: { question, clientSubscriptionId, platformOrigin: 'vs_code_extension', additionalContext },
    });
    return body;
  }

  async function answer(question: string, additionalContext: unknown[]) {
    const body = await ask(question, additionalContext);
    expect(body.errors).toBeUndefined();
    const requestId = body.data!.aiAction.requestId;
    const messages = await stream.untilFinal(requestId, 20_000);
    return { requestId, final: messages.find((message) => message.chunkId === null && message.role === 'ASSISTANT')! };
  }

  const waitReady = (ref = 'main') => waitForIndex(service.prisma, { projectId: project.id, ref });

  const repository = (extra: Record<string, unknown> = {}) => ({
    category: 'REPOSITORY',
    id: project.fullPath,
    content: '',
    metadata: extra,
  });
  // The newest user turn of the last model request: the question with its context (earlier turns are history).
  const lastPrompt = () => String(stub.requests.at(-1)!.body.messages!.at(-1)!.content);

  it('answers the first question about an unindexed project with its code: waits for the run, streaming how far it is', async () => {
    const calls = stub.requests.length;
    const body = await ask('Where is the VAT amount computed?', [repository()]);
    expect(body.errors).toBeUndefined();
    const messages = await stream.untilFinal(body.data!.aiAction.requestId, 40_000);
    const final = messages.find((message) => message.chunkId === null && message.role === 'ASSISTANT')!;
    // While it waited, the run's progress came as the answer's first lines; the final message is the answer alone.
    const chunks = messages.filter((message) => message.chunkId !== null).map((message) => message.content);
    expect(chunks[0]).toMatch(new RegExp(`^_(Waiting for an indexing worker for|Indexing) ${project.fullPath}`));
    expect(final.content).not.toContain('Indexing');
    expect(final.content).not.toMatch(/indexing has started|still being indexed/);
    expect((final.extras!.sources as Source[]).map((source) => source.path)).toContain('src/billing/tax.ts');
    expect(stub.requests.length).toBe(calls + 1);
    expect(lastPrompt()).toContain('computeVatAmount');
    const index = await service.prisma.codeIndex.findUniqueOrThrow({ where: { projectId_ref: { projectId: project.id, ref: 'main' } } });
    expect(index.state).toBe('ready');
    expect(index.filesTotal).toBe(index.filesIndexed);
  });

  it('grounds the answer in the code found, with citations in extras.sources', async () => {
    const { requestId, final } = await answer('Where is the VAT amount computed for an invoice line?', [repository()]);
    const prompt = lastPrompt();
    expect(prompt).toContain('<repository id=');
    expect(prompt).toContain('<code path="src/billing/tax.ts" lines="1-4" language="typescript">');
    expect(prompt).toContain('computeVatAmount');
    const sources = final.extras!.sources as Source[];
    expect(sources[0]).toMatchObject({
      path: 'src/billing/tax.ts',
      startLine: 1,
      endLine: 4,
      blobId: expect.stringMatching(/^[0-9a-f]{40}$/),
      commitSha: repo.head(),
      ref: 'main',
      projectPath: project.fullPath,
    });
    expect(sources[0].score).toBeGreaterThan(0);
    // Stored with the answer: aiMessages gives the same sources back.
    const { body } = await service.graphql<{ aiMessages: { nodes: Array<{ role: string; extras: { sources: Source[] } }> } }>(
      LSP_GET_MESSAGES,
      { token: user.token, variables: { requestIds: [requestId], roles: ['ASSISTANT'] } },
    );
    expect(body.data!.aiMessages.nodes[0].extras.sources).toEqual(sources);
  });

  it('includes a small directory whole instead of searching it', async () => {
    await answer('What do these billing functions do?', [
      { category: 'DIRECTORY', id: 'src/billing', content: '', metadata: { projectPath: project.fullPath } },
    ]);
    const prompt = lastPrompt();
    expect(prompt).toContain('All 2 files of');
    expect(prompt).toContain('applyLoyaltyDiscount');
    expect(prompt).toContain('computeVatAmount');
    expect(prompt).not.toContain('retry_with_backoff');
  });

  it('searches only the directory given in a repository item, and a branch of its own', async () => {
    // main, the only indexed branch: the whole repository's full-text matches need no scope check each (a small
    // directory is given whole, not searched: the GraphQL tests show a directory's search checked).
    const whole = await sentStatements(() => answer('how are invoices mailed?', [repository()]));
    expect(scopeChecks(whole.texts)).toEqual({ searches: 1, checked: 0 });
    await answer('how are invoices mailed?', [repository({ directory: 'lib' })]);
    expect(lastPrompt()).toContain('lib/invoice.rb');
    expect(lastPrompt()).not.toContain('src/billing/tax.ts');
    repo.git('checkout', '-q', '-b', 'feature/fx');
    repo.write('src/billing/currency.ts', 'export function convertCurrency(amount: number, rate: number) {\n  return amount * rate;\n}\n');
    repo.commit('currency');
    repo.git('checkout', '-q', 'main');
    // A branch not indexed yet is indexed while the answer waits, as the default branch is.
    const first = await answer('how is currency converted?', [repository({ branch: 'feature/fx' })]);
    expect((first.final.extras!.sources as Source[]).map((source) => source.path)).toContain('src/billing/currency.ts');
    await waitReady('feature/fx');
    // The branch's new chunks are not in main's snapshot: main's search checks each match again, and never shows them.
    const onMain = await sentStatements(() => answer('how is currency converted?', [repository()]));
    expect(scopeChecks(onMain.texts)).toEqual({ searches: 1, checked: 1 });
    expect((onMain.result.final.extras!.sources as Source[]).map((source) => source.path)).not.toContain('src/billing/currency.ts');
    expect(lastPrompt()).not.toContain('convertCurrency');
  });

  it('keeps excluded files out of the prompt', async () => {
    await service.prisma.project.update({ where: { id: project.id }, data: { contextExclusions: ['src/billing/'] } });
    try {
      const { final } = await answer('Where is the VAT amount computed for an invoice line?', [repository()]);
      expect(lastPrompt()).not.toContain('computeVatAmount');
      expect((final.extras!.sources as Source[]).some((source) => source.path.startsWith('src/billing/'))).toBe(false);
    } finally {
      await service.prisma.project.update({ where: { id: project.id }, data: { contextExclusions: [] } });
    }
  });

  it('searches the project a CODEBASE_SEARCH question is asked about, even without repository context', async () => {
    const { body } = await service.graphql<{ aiAction: { requestId: string } }>(
      `mutation($q: String!, $r: AiModelID, $c: String) { aiAction(input: { chat: { content: $q, resourceId: $r }, clientSubscriptionId: ` +
        `$c }) { requestId errors } }`,
      {
        token: user.token,
        variables: {
          q: 'Where in the codebase is the VAT amount computed?',
          r: `gid://gitlab/Project/${project.id}`,
          c: clientSubscriptionId,
        },
      },
    );
    const messages = await stream.untilFinal(body.data!.aiAction.requestId, 20_000);
    const final = messages.find((message) => message.chunkId === null && message.role === 'ASSISTANT')!;
    expect(lastPrompt()).toContain('computeVatAmount');
    expect((final.extras!.sources as Source[])[0].path).toBe('src/billing/tax.ts');
    expect(String(stub.requests.at(-1)!.body.messages![0].content)).toContain('Task: answer from the repository context');
  });

  it('says so when the index failed', async () => {
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
    const broken = (await createProject(service.prisma, { fullPath: `${group}/${unique('broken')}`, repository: '/nonexistent/repo' }))
      .project;
    await addMember(service.prisma, { fullPath: broken.fullPath, username: user.username, accessLevel: 'developer' });
    await answer('anything', [{ category: 'REPOSITORY', id: broken.fullPath, content: '' }]);
    await waitForIndex(service.prisma, { projectId: broken.id, ref: broken.defaultBranch, state: 'failed', timeoutMs: 15_000 });
    const { final } = await answer('anything', [{ category: 'REPOSITORY', id: broken.fullPath, content: '' }]);
    expect(final.content).toMatch(/failed\\: The project's repository path does not exist/);
    // The server's path stays in the worker log.
    expect(final.content).not.toContain('nonexistent');
  });

  it('refuses what the user may not use, storing nothing and revealing nothing', async () => {
    const before = await service.prisma.aiMessage.count();
    // A user of another group, with a seat of their own, cannot tell a hidden project from a missing one.
    const outsider = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: outsider.username });
    const hidden = await ask('what does it do?', [repository()], outsider.token);
    const missing = await ask('what does it do?', [{ category: 'REPOSITORY', id: 'nobody/nothing', content: '' }], outsider.token);
    expect(hidden.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(hidden.errors?.[0]?.message).toBe(missing.errors?.[0]?.message);
    const byId = await ask('what does it do?', [{ category: 'REPOSITORY', id: String(project.id), content: '' }], outsider.token);
    expect(byId.errors?.[0]?.message).toBe(missing.errors?.[0]?.message);

    const climbing = await ask('what is there?', [repository({ directory: '../../etc' })]);
    expect(climbing.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'additionalContext.metadata.directory' });
    const climbingDirectory = await ask('what is there?', [
      { category: 'DIRECTORY', id: '../secrets', content: '', metadata: { projectPath: project.fullPath } },
    ]);
    expect(climbingDirectory.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    const noSeat = await userWithToken(service.prisma);
    await addMember(service.prisma, { fullPath: project.fullPath, username: noSeat.username, accessLevel: 'developer' });
    expect((await ask('what does it do?', [repository()], noSeat.token)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    await service.prisma.project.update({ where: { id: project.id }, data: { duoFeaturesEnabled: false } });
    try {
      const off = await ask('what does it do?', [repository()]);
      expect(off.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' }, message: expect.stringContaining('turned off') });
    } finally {
      await service.prisma.project.update({ where: { id: project.id }, data: { duoFeaturesEnabled: true } });
    }
    expect(await service.prisma.aiMessage.count()).toBe(before);
  });

  it('refuses repository context to a user whose add-ons do not include it', async () => {
    const restricted = await startTestService({ role: 'api', env: { DUO_DISABLED_CONTEXT_CATEGORIES: 'repository,directory' } });
    try {
      const member = await userWithToken(restricted.prisma);
      const group = await groupWithSeat(restricted.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: member.username });
      const other = (await createProject(restricted.prisma, { fullPath: `${group}/${unique('p')}` })).project;
      await addMember(restricted.prisma, { fullPath: other.fullPath, username: member.username, accessLevel: 'developer' });
      const { body } = await restricted.graphql(LSP_CHAT_MUTATION, {
        token: member.token,
        variables: {
          question: 'hi',
          platformOrigin: 'vs_code_extension',
          additionalContext: [{ category: 'REPOSITORY', id: other.fullPath, content: '' }],
        },
      });
      expect(body.errors?.[0]).toMatchObject({
        extensions: { code: 'FORBIDDEN' },
        message: expect.stringContaining('include_repository_context'),
      });
    } finally {
      await restricted.close();
    }
  });
});

// A repository whose first index cannot be waited for (too large for the bound, or the bound ran
// out): the answer comes at once without its code, and says so plainly first.
describe('a question about a repository still being indexed when the wait is over', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let repo: GitRepo;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
    // A bound of 1 ms runs out before any run could end.
    service = await startTestService({
      role: 'all',
      env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub', INDEX_DEBOUNCE_MS: '0', CHAT_INDEX_WAIT_MS: '1' },
    });
    repo = createGitRepo(BILLING_FILES);
  });
  afterAll(async () => {
    await service.close();
    await stub.close();
    repo.destroy();
  });

  it('answers without the code, saying it is still being indexed, how far, and what to do', async () => {
    const user = await userWithToken(service.prisma);
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    const { project } = await createProject(service.prisma, { fullPath: `${group}/${unique('big')}`, repository: repo.path });
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
    const client = wsClient(service.url, user.token);
    const clientSubscriptionId = crypto.randomUUID();
    const stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, clientSubscriptionId, aiAction: 'CHAT' });
    try {
      const { body } = await service.graphql<{ aiAction: { requestId: string } }>(CHAT, {
        token: user.token,
        variables: {
          question: 'Where is the VAT amount computed?',
          clientSubscriptionId,
          platformOrigin: 'vs_code_extension',
          additionalContext: [{ category: 'REPOSITORY', id: project.fullPath, content: '', metadata: {} }],
        },
      });
      const messages = await stream.untilFinal(body.data!.aiAction.requestId, 20_000);
      const final = messages.find((message) => message.chunkId === null && message.role === 'ASSISTANT')!;
      // The notice is text in Markdown: its punctuation escaped (src/chat/markdown-text.ts).
      const notice = final.content.replace(/\\(.)/g, '$1');
      expect(notice).toMatch(new RegExp(`^The code of ${project.fullPath} \\(main\\) is still being indexed \\(`));
      expect(notice).toContain('so this answer does not use it. Ask again once the index is ready');
      // The model answered the question all the same (the stub echoes it), told the code is not there.
      expect(final.content).toContain('Where is the VAT amount computed?');
      expect(final.extras!.sources).toEqual([]);
      const prompt = String(stub.requests.at(-1)!.body.messages!.at(-1)!.content);
      expect(prompt).toMatch(/<repository id=[^>]*>\nThe code of .* is still being indexed/);
      expect(prompt).not.toContain('computeVatAmount');
      // The run's status while it was waited for, then the notice, then the answer: after the status lines, the final text.
      const streamed = messages
        .filter((message) => message.chunkId !== null)
        .map((message) => message.content)
        .join('');
      expect(streamed.endsWith(final.content)).toBe(true);
      expect(streamed.slice(0, streamed.length - final.content.length)).toMatch(/^(_[^\n]+…_\n\n)*$/);
      // The run it started goes on: the next question gets the code.
      await waitForIndex(service.prisma, { projectId: project.id, ref: 'main' });
    } finally {
      stream.stop();
      await client.dispose();
    }
  });
});
