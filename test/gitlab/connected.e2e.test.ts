import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { readJson } from '../helpers/http';
import { LSP_CHAT_MUTATION } from '../helpers/chat-client';
import { userWithToken } from '../helpers/fixtures';
import { ACCESS, startGitLabStandIn, type GitLabStandIn, type StandInGroup, type StandInUser } from '../helpers/gitlab-stand-in';
import { startTestService, type TestService } from '../helpers/test-service';
import { sleep, waitUntil } from '../helpers/wait';
import { openCable, overCable } from '../security/transports';

const AUTH_CACHE_MS = 400;
const CURRENT_USER = 'query { currentUser { id username name duoChatAvailableFeatures } }';
const PROJECT = 'query($fullPath: ID!) { project(fullPath: $fullPath) { id fullPath } }';
const NOT_AVAILABLE = "The resource that you are attempting to access does not exist or you don't have permission to perform this action";

/** The language server's chat mutation about a project (its resourceId). */
const chatAbout = (service: TestService, token: string, projectId: number) =>
  service.graphql<{ aiAction: { requestId: string; errors: string[] } | null }>(LSP_CHAT_MUTATION, {
    token,
    variables: {
      question: 'what does this project do?',
      resourceId: `gid://gitlab/Project/${projectId}`,
      currentFileContext: null,
      clientSubscriptionId: crypto.randomUUID(),
      platformOrigin: 'language_server',
    },
  });

/** After AUTH_CACHE_MS, what the service cached from GitLab has lapsed. */
const cacheLapse = () => sleep(AUTH_CACHE_MS + 150);

/** A graphql-ws client of `token`, connected at once: `run` asks CURRENT_USER, `closeCode` says how its socket closed (null: open). */
function socketClient(service: TestService, token: string) {
  let code: number | null = null;
  const client = createClient({
    url: `${service.url.replace(/^http/, 'ws')}/api/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: false,
    // A close the test waits for is no error of the client's (graphql-ws logs one without this).
    onNonLazyError: () => undefined,
    on: { closed: (event) => (code = (event as { code: number }).code) },
  });
  const run = () =>
    new Promise<unknown>((resolve) => {
      client.subscribe({ query: CURRENT_USER }, { next: resolve, error: resolve, complete: () => undefined });
    });
  return { client, run, closeCode: () => code };
}

// Connected mode through the service's real entry points, against the GitLab stand-in (whose every answer is checked against
// GitLab's JSON schemas): nothing is created with admin commands, every identity and permission comes from "GitLab".
describe('connected to GitLab: identities, projects and permissions from GitLab', () => {
  let gitlab: GitLabStandIn;
  let service: TestService;
  let serviceToken: string;
  let platform: StandInGroup;

  beforeAll(async () => {
    gitlab = await startGitLabStandIn();
    const bot = gitlab.addUser({ username: 'duo-service', admin: true });
    serviceToken = gitlab.addToken(bot.id, { scopes: ['read_api', 'read_repository'] });
    platform = gitlab.addGroup({ path: 'platform' });
    service = await startTestService({
      env: {
        GITLAB_URL: gitlab.url,
        GITLAB_SERVICE_TOKEN: serviceToken,
        AUTH_CACHE_MS: String(AUTH_CACHE_MS),
        SOCKET_REAUTH_INTERVAL_MS: '200',
        GITLAB_TIMEOUT_MS: '2000',
      },
    });
  });
  afterAll(async () => {
    await service?.close();
    await gitlab?.close();
  });
  afterEach(() => {
    gitlab.up();
    expect(gitlab.violations).toEqual([]);
  });

  const newUser = (username: string): StandInUser => gitlab.addUser({ username: `${username}-${Math.random().toString(36).slice(2, 7)}` });
  const rest = (path: string, token: string) => fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${token}` } });

  it("takes a GitLab personal access token on GraphQL and REST, mirroring the user by GitLab's id", async () => {
    const alice = newUser('alice');
    const token = gitlab.addToken(alice.id, { scopes: ['api'] });
    const { status, body } = await service.graphql(CURRENT_USER, { token });
    expect(status).toBe(200);
    expect(body).toEqual({
      data: {
        currentUser: {
          id: `gid://gitlab/User/${alice.id}`,
          username: alice.username,
          name: alice.name,
          duoChatAvailableFeatures: expect.arrayContaining(['include_repository_context']),
        },
      },
    });
    const mirrored = await service.prisma.user.findUnique({ where: { gitlabUserId: alice.id } });
    expect(mirrored).toMatchObject({ id: alice.id, username: alice.username, email: alice.email, state: 'active' });
    const user = await rest('/api/v4/user', token);
    expect(user.status).toBe(200);
    expect(await readJson(user)).toMatchObject({ id: alice.id, username: alice.username });
    // The token's own facts are GitLab's.
    const self = await rest('/api/v4/personal_access_tokens/self', token);
    expect(await readJson(self)).toMatchObject({ user_id: alice.id, scopes: ['api'], revoked: false });
    // The caller's token went to GitLab; the service token did not, for any of it.
    expect(gitlab.requestsWith(token).map((request) => request.path)).toEqual(
      expect.arrayContaining(['/api/v4/personal_access_tokens/self', '/api/v4/user']),
    );
    expect(gitlab.requestsWith(serviceToken)).toEqual([]);
  });

  it("follows a rename on GitLab once AUTH_CACHE_MS has passed, keeping the user's id", async () => {
    const nora = newUser('nora');
    const token = gitlab.addToken(nora.id);
    expect((await service.graphql(CURRENT_USER, { token })).body.data?.currentUser).toMatchObject({ username: nora.username });
    nora.username = `${nora.username}-renamed`;
    nora.name = 'Nora Renamed';
    await cacheLapse();
    expect((await service.graphql(CURRENT_USER, { token })).body.data?.currentUser).toMatchObject({
      id: `gid://gitlab/User/${nora.id}`,
      username: nora.username,
      name: 'Nora Renamed',
    });
    expect(await service.prisma.user.count({ where: { gitlabUserId: nora.id } })).toBe(1);
  });

  it("refuses to mirror a GitLab user over a local user's row, writing nothing", async () => {
    const olga = newUser('olga');
    // A local user (left from standalone use) holds the GitLab user's username.
    const local = await service.prisma.user.create({
      data: { username: olga.username, name: 'local', email: `local-${olga.id}@example.com` },
    });
    const response = await rest('/api/v4/user', gitlab.addToken(olga.id));
    expect(response.status).toBe(500);
    expect(await readJson(response)).toEqual({ message: expect.stringMatching(/a local row has its id, username or path/) });
    expect(await service.prisma.user.findUnique({ where: { username: olga.username } })).toEqual(local);
    expect(await service.prisma.user.findUnique({ where: { gitlabUserId: olga.id } })).toBeNull();
  });

  it('takes project and group access tokens (bot users) and OAuth tokens', async () => {
    const bot = gitlab.addUser({ username: `project_${Math.random().toString(36).slice(2, 7)}_bot`, bot: true });
    const projectToken = gitlab.addToken(bot.id, { kind: 'project', scopes: ['api'] });
    expect((await service.graphql(CURRENT_USER, { token: projectToken })).body.data?.currentUser).toMatchObject({ username: bot.username });
    const bob = newUser('bob');
    const oauth = gitlab.addToken(bob.id, { kind: 'oauth', scopes: ['api'], oauthExpiresInSeconds: 3600 });
    expect((await service.graphql(CURRENT_USER, { token: oauth })).body.data?.currentUser).toMatchObject({ username: bob.username });
    // An OAuth token (no access token's prefix) is asked about where it is known, not first as an access token.
    expect(gitlab.requestsWith(oauth).map((request) => request.path)).toEqual(['/oauth/token/info', '/api/v4/user']);
    const info = await rest('/oauth/token/info', oauth);
    expect(info.status).toBe(200);
    expect(await readJson(info)).toMatchObject({ resource_owner_id: bob.id, scope: ['api'] });
  });

  it("honours GitLab's scopes: read_user alone cannot use the API, read_api reads but does not write", async () => {
    const carol = newUser('carol');
    const readUser = gitlab.addToken(carol.id, { scopes: ['read_user'] });
    const graphql = await service.graphql(CURRENT_USER, { token: readUser });
    expect(graphql.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const response = await rest('/api/v4/user', readUser);
    expect(response.status).toBe(403);
    expect(await readJson(response)).toMatchObject({ error: 'insufficient_scope' });
    const readApi = gitlab.addToken(carol.id, { scopes: ['read_api'] });
    expect((await service.graphql(CURRENT_USER, { token: readApi })).body.data?.currentUser).toMatchObject({ username: carol.username });
    // ai_features alone may not read the user on GitLab: the user must be known from an earlier token.
    const stranger = newUser('stranger');
    const aiOnly = await service.graphql(CURRENT_USER, { token: gitlab.addToken(stranger.id, { scopes: ['ai_features'] }) });
    expect(aiOnly.body.errors?.[0]).toMatchObject({ message: expect.stringMatching(/read_user/), extensions: { code: 'FORBIDDEN' } });
    const aiFeatures = gitlab.addToken(carol.id, { scopes: ['ai_features'] });
    expect((await service.graphql(CURRENT_USER, { token: aiFeatures })).body.data?.currentUser).toMatchObject({ username: carol.username });
    const project = gitlab.addProject({ namespace: platform, path: `scopes-${carol.id}`, visibility: 'internal' });
    const write = await chatAbout(service, readApi, project.id);
    expect(write.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('refuses a token revoked on GitLab once AUTH_CACHE_MS has passed, on REST and GraphQL', async () => {
    const dave = newUser('dave');
    const token = gitlab.addToken(dave.id);
    expect((await rest('/api/v4/user', token)).status).toBe(200);
    gitlab.revokeToken(token);
    await cacheLapse();
    expect((await rest('/api/v4/user', token)).status).toBe(401);
    const { status, body } = await service.graphql(CURRENT_USER, { token });
    expect(status).toBe(401);
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('refuses an access token past its expiry date, and a deleted user', async () => {
    const erin = newUser('erin');
    const expired = gitlab.addToken(erin.id, { expiresAt: '2020-01-01' });
    expect((await rest('/api/v4/user', expired)).status).toBe(401);
    const frank = newUser('frank');
    const token = gitlab.addToken(frank.id);
    expect((await rest('/api/v4/user', token)).status).toBe(200);
    gitlab.deleteUser(frank.id);
    await cacheLapse();
    expect((await rest('/api/v4/user', token)).status).toBe(401);
  });

  it("closes a blocked user's open graphql-ws socket, and their ActionCable connection", async () => {
    const grace = newUser('grace');
    const token = gitlab.addToken(grace.id);
    const { client, run, closeCode } = socketClient(service, token);
    const first = await run();
    expect(first).toMatchObject({ data: { currentUser: { username: grace.username } } });
    // An idle subscription holds the socket open.
    client.subscribe(
      {
        query: `subscription($userId: UserID) { aiCompletionResponse(userId: $userId, aiAction: CHAT) { requestId } }`,
        variables: { userId: `gid://gitlab/User/${grace.id}` },
      },
      { next: () => undefined, error: () => undefined, complete: () => undefined },
    );
    const cable = await openCable(service.url, token);
    expect(await overCable(service.url, { query: CURRENT_USER, cable })).toMatchObject({
      data: { currentUser: { username: grace.username } },
    });
    gitlab.setUserState(grace.id, 'blocked');
    await waitUntil(closeCode, { timeoutMs: 5_000, what: 'the graphql-ws socket to close' });
    expect(closeCode()).toBe(4403);
    await cable.closed;
    expect(cable.frames.some((frame) => frame.type === 'disconnect' && frame.reason === 'unauthorized')).toBe(true);
    await client.dispose();
  });

  it("answers 503 naming GitLab when GitLab is down, and never falls back to the service's own users", async () => {
    // A local user and token, as standalone mode would take them: connected, they are not identities.
    const local = await userWithToken(service.prisma);
    expect((await rest('/api/v4/user', local.token)).status).toBe(401);
    const henry = newUser('henry');
    const token = gitlab.addToken(henry.id);
    for (const how of ['503', 'refuse'] as const) {
      gitlab.down(how);
      const response = await rest('/api/v4/user', token);
      expect(response.status).toBe(503);
      expect(await readJson(response)).toEqual({ message: `GitLab at ${gitlab.url} is unavailable` });
      const { status, body } = await service.graphql(CURRENT_USER, { token });
      expect(status).toBe(503);
      expect(body.errors?.[0]).toMatchObject({
        message: `GitLab at ${gitlab.url} is unavailable`,
        extensions: { code: 'SERVICE_UNAVAILABLE' },
      });
      // A socket that connects meanwhile is closed as "try again" (1011), not refused as a bad token (4403).
      const socket = new WebSocket(`${service.url.replace(/^http/, 'ws')}/api/graphql`, 'graphql-transport-ws');
      await new Promise((resolve) => socket.once('open', resolve));
      socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${token}` } }));
      expect(await new Promise((resolve) => socket.once('close', resolve))).toBe(1011);
      gitlab.up();
    }
    // Back up: the same token works.
    expect((await rest('/api/v4/user', token)).status).toBe(200);
  });

  it('keeps an open socket while GitLab is down: the next operation gets the 503 error, and works once GitLab is back', async () => {
    const lena = newUser('lena');
    const token = gitlab.addToken(lena.id);
    const { client, run, closeCode } = socketClient(service, token);
    const cable = await openCable(service.url, token);
    expect(await run()).toMatchObject({ data: { currentUser: { username: lena.username } } });
    expect(await overCable(service.url, { query: CURRENT_USER, cable })).toMatchObject({
      data: { currentUser: { username: lena.username } },
    });
    gitlab.down('503');
    await cacheLapse();
    const unavailable = { message: `GitLab at ${gitlab.url} is unavailable`, extensions: { code: 'SERVICE_UNAVAILABLE' } };
    expect(await run()).toEqual([expect.objectContaining(unavailable)]);
    expect(await overCable(service.url, { query: CURRENT_USER, cable })).toEqual({ errors: [expect.objectContaining(unavailable)] });
    expect(closeCode()).toBeNull();
    expect(cable.frames.some((frame) => frame.type === 'disconnect')).toBe(false);
    gitlab.up();
    expect(await run()).toMatchObject({ data: { currentUser: { username: lena.username } } });
    expect(await overCable(service.url, { query: CURRENT_USER, cable })).toMatchObject({
      data: { currentUser: { username: lena.username } },
    });
    await client.dispose();
    await cable.close();
  });

  it("knows a project the first time it is referenced, with GitLab's id, visibility, default branch and URLs", async () => {
    const ivan = newUser('ivan');
    const token = gitlab.addToken(ivan.id);
    const backend = gitlab.addGroup({ path: `backend-${ivan.id}`, parent: platform });
    const project = gitlab.addProject({ namespace: backend, path: 'api', visibility: 'private', defaultBranch: 'trunk' });
    gitlab.setGroupMember(platform, ivan.id, ACCESS.reporter);
    const fullPath = gitlab.projectFullPath(project);
    expect(await service.prisma.project.findUnique({ where: { gitlabProjectId: project.id } })).toBeNull();
    const { body } = await service.graphql(PROJECT, { token, variables: { fullPath } });
    expect(body.data?.project).toEqual({ id: `gid://gitlab/Project/${project.id}`, fullPath });
    expect(await service.prisma.project.findUnique({ where: { gitlabProjectId: project.id } })).toMatchObject({
      id: project.id,
      fullPath,
      visibility: 'private',
      defaultBranch: 'trunk',
      repositoryUrl: `${gitlab.url}/${fullPath}.git`,
      webUrl: `${gitlab.url}/${fullPath}`,
    });
    // Inherited membership (Reporter in the parent group) lets Ivan chat about it.
    const chat = await chatAbout(service, token, project.id);
    expect(chat.body.errors).toBeUndefined();
    expect(chat.body.data?.aiAction?.requestId).toEqual(expect.any(String));
  });

  it('refuses a user removed from the project on GitLab once AUTH_CACHE_MS has passed, as a missing project', async () => {
    const judy = newUser('judy');
    const token = gitlab.addToken(judy.id);
    const project = gitlab.addProject({ namespace: platform, path: `secret-${judy.id}`, visibility: 'private' });
    gitlab.setProjectMember(project, judy.id, ACCESS.developer);
    expect((await chatAbout(service, token, project.id)).body.data?.aiAction?.requestId).toEqual(expect.any(String));
    gitlab.setProjectMember(project, judy.id, null);
    await cacheLapse();
    const refused = await chatAbout(service, token, project.id);
    const missing = await chatAbout(service, token, 987_654_321);
    expect(refused.body.errors?.[0]).toMatchObject({ message: NOT_AVAILABLE, extensions: { code: 'NOT_FOUND' } });
    expect(refused.body.errors?.[0]).toEqual(missing.body.errors?.[0]);
    expect(refused.body.data).toEqual(missing.body.data);
    // The membership GitLab gave is gone locally too (what a job without the user's token reads).
    expect(await service.prisma.projectMember.findMany({ where: { projectId: project.id, userId: judy.id } })).toEqual([]);
  });

  it("reads a private project's code for Reporters and up, by GitLab's level: a Guest gets a missing project's answer", async () => {
    const mia = newUser('mia');
    const token = gitlab.addToken(mia.id);
    const project = gitlab.addProject({ namespace: platform, path: `code-${mia.id}`, visibility: 'private' });
    const search = async (id: number) => {
      const response = await rest(`/api/v4/projects/${id}/search/semantic?q=${encodeURIComponent('where is the token checked')}`, token);
      return { status: response.status, body: await readJson(response) };
    };
    gitlab.setProjectMember(project, mia.id, ACCESS.guest);
    const asGuest = await search(project.id);
    expect(asGuest).toEqual(await search(987_654_323));
    expect(asGuest.status).toBe(404);
    // A Guest may still know of the project (GitLab's read_project).
    expect(
      (await service.graphql(PROJECT, { token, variables: { fullPath: gitlab.projectFullPath(project) } })).body.data?.project,
    ).toEqual({
      id: `gid://gitlab/Project/${project.id}`,
      fullPath: gitlab.projectFullPath(project),
    });
    gitlab.setProjectMember(project, mia.id, ACCESS.reporter);
    await cacheLapse();
    // Past the policy: the project has no index yet (GitLab's 422 while a project has no embeddings).
    expect((await search(project.id)).status).toBe(422);
  });

  it('answers a hidden project exactly as a missing one', async () => {
    const kim = newUser('kim');
    const token = gitlab.addToken(kim.id);
    const hidden = gitlab.addProject({ namespace: platform, path: `hidden-${kim.id}`, visibility: 'private' });
    const hiddenPath = gitlab.projectFullPath(hidden);
    const asHidden = await service.graphql(PROJECT, { token, variables: { fullPath: hiddenPath } });
    const asMissing = await service.graphql(PROJECT, { token, variables: { fullPath: `platform/nothing-${kim.id}` } });
    expect(asHidden).toEqual(asMissing);
    expect(asHidden.body.data).toEqual({ project: null });
    const chatHidden = await chatAbout(service, token, hidden.id);
    const chatMissing = await chatAbout(service, token, 987_654_322);
    expect(chatHidden.body).toEqual(chatMissing.body);
    // Nothing of the hidden project was mirrored.
    expect(await service.prisma.project.findUnique({ where: { gitlabProjectId: hidden.id } })).toBeNull();
  });

  it('sent the service token with none of the requests made for callers', () => {
    expect(gitlab.requestsWith(serviceToken)).toEqual([]);
  });
});

describe('connected to GitLab: DUO_ACCESS', () => {
  let gitlab: GitLabStandIn;
  let service: TestService;
  let serviceToken: string;
  let duoUsers: StandInGroup;

  beforeAll(async () => {
    gitlab = await startGitLabStandIn();
    const bot = gitlab.addUser({ username: 'duo-service', admin: true });
    serviceToken = gitlab.addToken(bot.id, { scopes: ['read_api'] });
    duoUsers = gitlab.addGroup({ path: 'duo-users' });
    service = await startTestService({
      env: {
        GITLAB_URL: gitlab.url,
        GITLAB_SERVICE_TOKEN: serviceToken,
        AUTH_CACHE_MS: String(AUTH_CACHE_MS),
        DUO_ACCESS: 'groups:duo-users',
        DUO_ADD_ON: 'duo_enterprise',
      },
    });
  });
  afterAll(async () => {
    await service?.close();
    await gitlab?.close();
  });
  afterEach(() => expect(gitlab.violations).toEqual([]));

  it("gives Duo to members of the named group (direct or inherited), with the add-on's features, and to no one else", async () => {
    const member = gitlab.addUser({ username: 'member' });
    const team = gitlab.addGroup({ path: 'team', parent: duoUsers });
    gitlab.setGroupMember(team, member.id, ACCESS.guest);
    const outsider = gitlab.addUser({ username: 'outsider' });
    const features = async (token: string) =>
      (await service.graphql<{ currentUser: { duoChatAvailableFeatures: string[] } }>(CURRENT_USER, { token })).body.data?.currentUser
        .duoChatAvailableFeatures;
    // Membership of a subgroup makes no member of the named group above it.
    const memberToken = gitlab.addToken(member.id);
    expect(await features(memberToken)).toEqual([]);
    gitlab.setGroupMember(duoUsers, member.id, ACCESS.guest);
    await cacheLapse();
    expect(await features(memberToken)).toEqual(expect.arrayContaining(['include_repository_context', 'include_merge_request_context']));
    const outsiderToken = gitlab.addToken(outsider.id);
    expect(await features(outsiderToken)).toEqual([]);
    const chat = await service.graphql(LSP_CHAT_MUTATION, {
      token: outsiderToken,
      variables: {
        question: 'hi',
        resourceId: null,
        currentFileContext: null,
        clientSubscriptionId: 'x',
        platformOrigin: 'language_server',
      },
    });
    expect(chat.body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    // Group membership is read with the service token, and only that.
    expect(
      gitlab.requestsWith(serviceToken).every((request) => /^\/api\/v4\/groups\/duo-users\/members\/all\/\d+$/.test(request.path)),
    ).toBe(true);
    expect(gitlab.requestsWith(serviceToken).length).toBeGreaterThan(0);
  });
});
