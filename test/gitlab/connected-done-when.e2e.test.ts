import type * as Anycable from '@anycable/core';
import { graphqlFixturesOf } from '../conformance/conformance-service';
import { createLspCable, subscribeLikeLsp } from '../helpers/cable-clients';
import { BILLING_FILES, createGitRepo, type GitRepo } from '../helpers/git-repo';
import {
  ACCESS,
  STAND_IN_GITLAB_VERSION,
  startGitLabStandIn,
  type GitLabStandIn,
  type StandInProject,
  type StandInUser,
} from '../helpers/gitlab-stand-in';
import { readJson } from '../helpers/http';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';
import { getMrDiscussionsQuery, VS_CODE_USER_AGENT } from '../helpers/vscode-documents';
import { waitUntil } from '../helpers/wait';

// Issue 43's "Done when", as one story on one fresh service: GITLAB_URL set (the stand-in), no admin command, every user,
// token, project, repository and hook GitLab's. What other files already prove in more detail is not repeated here:
// - every kind of token, scope, revocation, GitLab down, DUO_ACCESS: test/gitlab/connected.e2e.test.ts;
// - cloning with the service token and its refusals: test/gitlab/gitlab-repository.e2e.test.ts;
// - register-webhooks and project hooks, system hook refusals: test/gitlab/gitlab-hooks.e2e.test.ts;
// - what pass-through sends, drops and limits: test/http/gitlab-pass-through.e2e.test.ts;
// - every client document in connected mode: test/conformance (`gitlab: true`).

const AUTH_CACHE_MS = 500;
const SOCKET_REAUTH_INTERVAL_MS = 250;
const SYSTEM_HOOK_TOKEN = 'a-system-hook-secret-of-this-test';

type Message = {
  requestId: string;
  content: string;
  role: string;
  chunkId: number | null;
  errors: string[];
  extras: { sources: Array<{ path: string }> } | null;
};

const lsp = graphqlFixturesOf('gitlab-lsp');

describe('done when: a fresh start next to GitLab, nothing made here by hand (issue 43)', () => {
  let gitlab: GitLabStandIn;
  let stub: StubLlmServer;
  let service: TestService;
  let work: GitRepo;
  let project: StandInProject;
  let fullPath: string;
  let alice: StandInUser;
  let aliceToken: string;
  let bob: StandInUser;
  let bobToken: string;
  let serviceToken: string;
  const cables: Anycable.Cable[] = [];

  /** A GraphQL document sent as the language server sends it, with a user's GitLab token. */
  const send = async <Data>(token: string, document: string, variables: Record<string, unknown>) => {
    const response = await fetch(`${service.url}/api/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'user-agent': 'gitlab-language-server:8.0.0' },
      body: JSON.stringify({ query: document, variables }),
    });
    return (await response.json()) as { data?: Data; errors?: Array<{ message: string; extensions?: { code?: string } }> };
  };
  /** The language server's chat about the project's repository (its REPOSITORY context item), as chat-17.5 sends it. */
  const askAboutRepository = (token: string, clientSubscriptionId: string) =>
    send<{ aiAction: { requestId: string; errors: string[] } | null }>(token, lsp['chat-17.5'].document!, {
      question: 'Where is the VAT amount computed for an invoice line?',
      resourceId: null,
      currentFileContext: null,
      clientSubscriptionId,
      platformOrigin: 'vs_code_extension',
      additionalContext: [{ id: fullPath, category: 'REPOSITORY', content: '', metadata: { enabled: true, title: fullPath } }],
    });
  const openChatSubscription = async (user: StandInUser, token: string) => {
    const cable = await createLspCable(`${service.url.replace(/^http/, 'ws')}/-/cable`, token);
    cables.push(cable);
    const clientSubscriptionId = crypto.randomUUID();
    const { messages } = await subscribeLikeLsp(cable, {
      query: lsp.aiCompletionResponse.document!,
      variables: { htmlResponse: false, userId: `gid://gitlab/User/${user.id}`, aiAction: 'CHAT', clientSubscriptionId },
      operationName: 'aiCompletionResponse',
    });
    const answers = () =>
      (messages as Array<{ result?: { data?: { aiCompletionResponse: Message | null } } }>)
        .map((message) => message.result?.data?.aiCompletionResponse)
        .filter((message): message is Message => Boolean(message));
    return { cable, clientSubscriptionId, answers };
  };

  beforeAll(async () => {
    gitlab = await startGitLabStandIn();
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
    // On GitLab: a service account, a group with a private project, two developers of it.
    const bot = gitlab.addUser({ username: 'duo-slice-bot', bot: true });
    serviceToken = gitlab.addToken(bot.id, { scopes: ['read_api', 'read_repository'] });
    const group = gitlab.addGroup({ path: 'finance' });
    gitlab.setGroupMember(group, bot.id, ACCESS.reporter);
    project = gitlab.addProject({ namespace: group, path: 'billing', visibility: 'private' });
    fullPath = gitlab.projectFullPath(project);
    alice = gitlab.addUser({ username: 'alice', name: 'Alice' });
    aliceToken = gitlab.addToken(alice.id, { scopes: ['api'] });
    bob = gitlab.addUser({ username: 'bob', name: 'Bob' });
    bobToken = gitlab.addToken(bob.id, { scopes: ['api'] });
    gitlab.setProjectMember(project, alice.id, ACCESS.developer);
    gitlab.setProjectMember(project, bob.id, ACCESS.developer);
    const mergeRequest = gitlab.addMergeRequest(project, { title: 'Round VAT per line', sourceBranch: 'vat-rounding', author: alice });
    gitlab.addNote(mergeRequest, { author: bob, body: 'Should this round half up?' });
    gitlab.addPipeline(project, { ref: 'vat-rounding', status: 'success' });

    service = await startTestService({
      role: 'all',
      env: {
        GITLAB_URL: gitlab.url,
        GITLAB_SERVICE_TOKEN: serviceToken,
        GITLAB_SYSTEM_HOOK_TOKEN: SYSTEM_HOOK_TOKEN,
        AUTH_CACHE_MS: String(AUTH_CACHE_MS),
        SOCKET_REAUTH_INTERVAL_MS: String(SOCKET_REAUTH_INTERVAL_MS),
        INDEX_DEBOUNCE_MS: '0',
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: stub.url,
        LLM_MODEL: 'stub',
        GATEKEEPER: 'false',
      },
    });
    // GitLab's admin adds the system hook in GitLab's Admin area: not a command of ours.
    gitlab.hooks.addSystemHook({ url: `${service.url}/api/v4/webhooks/push`, token: SYSTEM_HOOK_TOKEN });
    work = createGitRepo(BILLING_FILES);
  });
  afterAll(async () => {
    for (const cable of cables) cable.disconnect();
    await service?.close();
    await stub?.close();
    await gitlab?.close();
    work?.destroy();
  });
  afterEach(() => expect(gitlab.violations).toEqual([]));

  it('starts knowing no one: no user, group or project was made here', async () => {
    expect(await service.prisma.user.count()).toBe(0);
    expect(await service.prisma.group.count()).toBe(0);
    expect(await service.prisma.project.count()).toBe(0);
  });

  it("gets the project indexed by a push on GitLab, delivered by GitLab's system hook, cloned with the service token", async () => {
    const { before, after } = gitlab.git.push({ fullPath, from: work.path, branch: 'main' });
    const deliveries = await gitlab.hooks.deliverPush({ project, branch: 'main', before, after, user: alice });
    expect(deliveries).toEqual([
      expect.objectContaining({ hook: 'system', status: 202, body: expect.objectContaining({ project_id: project.id, ref: 'main' }) }),
    ]);
    const index = await waitUntil(() => service.prisma.codeIndex.findFirst({ where: { projectId: project.id, ref: 'main' } }), {
      until: (found) => found?.state === 'ready' && found.commitSha === work.head(),
      timeoutMs: 60_000,
      intervalMs: 200,
      what: 'the pushed commit indexed',
    });
    expect(index?.commitSha).toBe(after);
    expect(await service.prisma.project.findUniqueOrThrow({ where: { gitlabProjectId: project.id } })).toMatchObject({
      fullPath,
      visibility: 'private',
      repositoryUrl: `${gitlab.url}/${fullPath}.git`,
      webUrl: `${gitlab.url}/${fullPath}`,
    });
    const clones = gitlab.git.requests.filter((request) => request.path === `/${fullPath}.git/git-upload-pack`);
    expect(clones.some((request) => request.token === serviceToken && request.status === 200)).toBe(true);
    expect(clones.every((request) => request.token !== aliceToken && request.token !== bobToken)).toBe(true);
  }, 90_000);

  it("answers a user's GitLab token through the language server's chat flow, with the repository's code as context", async () => {
    // What the language server asks first: the version (GitLab's), who the token is, which Duo features it has.
    const version = await readJson(await fetch(`${service.url}/api/v4/version`, { headers: { authorization: `Bearer ${aliceToken}` } }));
    expect(version.version).toBe(STAND_IN_GITLAB_VERSION);
    const user = await send<{ currentUser: { id: string; username: string } }>(aliceToken, lsp.getUser.document!, {});
    expect(user.data?.currentUser).toMatchObject({ id: `gid://gitlab/User/${alice.id}`, username: 'alice' });
    const features = await send<{ currentUser: { duoChatAvailableFeatures: string[] } }>(
      aliceToken,
      lsp.getDuoAvailableFeatures.document!,
      {},
    );
    expect(features.data?.currentUser.duoChatAvailableFeatures).toContain('include_repository_context');

    const { clientSubscriptionId, answers } = await openChatSubscription(alice, aliceToken);
    const asked = await askAboutRepository(aliceToken, clientSubscriptionId);
    expect(asked.errors).toBeUndefined();
    const requestId = asked.data!.aiAction!.requestId;
    await waitUntil(() => answers().some((message) => message.requestId === requestId && message.chunkId === null), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'the final answer on the subscription',
    });
    const final = answers().find((message) => message.requestId === requestId && message.chunkId === null)!;
    expect(final).toMatchObject({ role: 'ASSISTANT', errors: [] });
    // Already indexed by the push: no "indexing" notice, and the code GitLab holds reached the model and the citations.
    expect(final.content).not.toMatch(/indexing has started|still being indexed/);
    expect(final.extras!.sources.map((source) => source.path)).toContain('src/billing/tax.ts');
    expect(JSON.stringify(stub.requests.at(-1)!.body.messages)).toContain('computeVatAmount');
  }, 60_000);

  it("gives VS Code's merge request and pipeline requests GitLab's own answers through duo-slice", async () => {
    const headers = { 'PRIVATE-TOKEN': aliceToken, 'user-agent': VS_CODE_USER_AGENT };
    const direct = (path: string, init: RequestInit = {}) =>
      fetch(`${gitlab.url}${path}`, { ...init, headers: { ...headers, ...init.headers } });
    const through = (path: string, init: RequestInit = {}) =>
      fetch(`${service.url}${path}`, { ...init, headers: { ...headers, ...init.headers } });
    for (const path of [
      `/api/v4/projects/${project.id}/merge_requests?state=opened&source_branch=vat-rounding`,
      `/api/v4/projects/${encodeURIComponent(fullPath)}/pipelines?ref=vat-rounding`,
    ]) {
      const answer = await through(path);
      expect(answer.status).toBe(200);
      const body = await readJson(answer);
      expect(body).toHaveLength(1);
      expect(body).toEqual(await readJson(await direct(path)));
    }
    const graphql = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: getMrDiscussionsQuery, variables: { projectPath: fullPath, iid: '1' } }),
    };
    const discussions = await readJson(await through('/api/graphql', graphql));
    expect(discussions.data.project.mergeRequest.discussions.nodes[0].notes.nodes[0].body).toBe('Should this round half up?');
    expect(discussions).toEqual(await readJson(await direct('/api/graphql', graphql)));
  });

  it('refuses a user removed from the project on GitLab within AUTH_CACHE_MS: chat about its repository and its search', async () => {
    const search = `/api/v4/projects/${project.id}/search/semantic?q=${encodeURIComponent('vat amount')}`;
    const searchAs = (token: string) => fetch(`${service.url}${search}`, { headers: { authorization: `Bearer ${token}` } });
    expect((await searchAs(bobToken)).status).toBe(200);
    const { clientSubscriptionId } = await openChatSubscription(bob, bobToken);
    expect((await askAboutRepository(bobToken, clientSubscriptionId)).errors).toBeUndefined();

    gitlab.setProjectMember(project, bob.id, null);
    const removedAt = Date.now();
    await waitUntil(async () => (await searchAs(bobToken)).status, {
      until: (status) => status === 404,
      timeoutMs: AUTH_CACHE_MS * 4,
      intervalMs: 50,
      what: 'the removed member refused',
    });
    // Refused once what was cached lapsed: AUTH_CACHE_MS, and the time one request takes on this loaded machine.
    expect(Date.now() - removedAt).toBeLessThan(AUTH_CACHE_MS + 1_000);
    const chat = await askAboutRepository(bobToken, clientSubscriptionId);
    expect(chat.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // Alice, still a member, is not affected.
    expect((await searchAs(aliceToken)).status).toBe(200);
  });

  it("closes a user's open language server socket once GitLab blocks them", async () => {
    const { cable } = await openChatSubscription(alice, aliceToken);
    // The server's `disconnect` frame (reconnect: false) closes the cable; a dropped transport would disconnect it.
    let ended: string | null = null;
    const end = (error?: { reason?: string }) => (ended = error?.reason ?? 'no reason');
    cable.on('close', end);
    cable.on('disconnect', end);
    gitlab.setUserState(alice.id, 'blocked');
    const blockedAt = Date.now();
    await waitUntil(() => ended, { timeoutMs: 5_000, intervalMs: 20, what: "the blocked user's cable to close" });
    expect(Date.now() - blockedAt).toBeLessThan(AUTH_CACHE_MS + SOCKET_REAUTH_INTERVAL_MS + 1_000);
    expect(ended).toBe('unauthorized');
    expect(cable.state).not.toBe('connected');
    // And the token is refused from now on.
    expect((await send(aliceToken, lsp.getUser.document!, {})).errors).toBeDefined();
  });
});
