import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { STAND_IN_GITLAB_VERSION, startGitLabStandIn, ACCESS, type GitLabStandIn } from '../helpers/gitlab-stand-in';
import { unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { BILLING_FILES, createGitRepo, type GitRepo } from '../helpers/git-repo';
import { waitUntil } from '../helpers/wait';
import { readJson } from '../helpers/http';
import { startTestService, type TestService } from '../helpers/test-service';
import { createNoteMutation, getMrDiscussionsQuery, queryGetProject, VS_CODE_USER_AGENT } from '../helpers/vscode-documents';

/** A selection `depth` fields deep (refused before it is sent, so GitLab's schema need not have it). */
const nest = (depth: number): string => (depth === 0 ? 'id' : `mergeRequest(iid: "1") { ${nest(depth - 1)} }`);

/** Headers a connection or its framing may carry without the caller having named them. */
const TRANSPORT_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding']);

describe('one URL for the IDE: connected mode passes what it does not serve on to GitLab', () => {
  let gitlab: GitLabStandIn;
  let service: TestService;
  let alice: UserWithToken;
  let projectPath: string;
  let projectId: number;
  let mergeRequestGid: string;
  let group: ReturnType<GitLabStandIn['addGroup']>;
  /** GITLAB_SERVICE_TOKEN: a token of GitLab's, of a bot user of the service's own. */
  let serviceToken: string;
  let repo: GitRepo | undefined;

  const api = (path: string, init: RequestInit & { token?: string } = {}) =>
    fetch(`${service.url}${path}`, {
      ...init,
      headers: { ...(init.token ? { 'PRIVATE-TOKEN': init.token } : {}), ...(init.headers as Record<string, string>) },
    });
  const graphql = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    fetch(`${service.url}/api/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json', 'user-agent': VS_CODE_USER_AGENT, ...headers },
      body: JSON.stringify(body),
    });
  const lastRequest = () => gitlab.requests.at(-1)!;
  /** A request exactly as written (no headers a client library adds), on a connection of its own. */
  const raw = (path: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer[] } = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { port } = new URL(service.url);
      const request = http.request(
        { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: false },
        (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on('error', reject);
      for (const chunk of options.body ?? []) request.write(chunk);
      request.end();
    });

  beforeAll(async () => {
    gitlab = await startGitLabStandIn();
    // Everyone and every token is GitLab's, as in a real deployment: nothing is made here with npm run admin.
    const aliceOnGitLab = gitlab.addUser({ username: unique('alice'), name: 'Alice' });
    alice = { id: aliceOnGitLab.id, username: aliceOnGitLab.username, token: gitlab.addToken(aliceOnGitLab.id, { scopes: ['api'] }) };
    const bot = gitlab.addUser({ username: unique('duo-slice-bot'), bot: true });
    serviceToken = gitlab.addToken(bot.id, { scopes: ['read_api', 'read_repository'] });
    group = gitlab.addGroup({ path: unique('platform') });
    const project = gitlab.addProject({ namespace: group, path: 'api', visibility: 'private' });
    gitlab.setGroupMember(group, aliceOnGitLab.id, ACCESS.developer);
    gitlab.setGroupMember(group, bot.id, ACCESS.reporter);
    projectPath = gitlab.projectFullPath(project);
    projectId = project.id;
    const mergeRequest = gitlab.addMergeRequest(project, { title: 'Log in with SSO', sourceBranch: 'feature/sso', author: aliceOnGitLab });
    gitlab.addNote(mergeRequest, { author: aliceOnGitLab, body: 'Please add a test for <expired> sessions' });
    gitlab.addMergeRequest(project, { title: 'Old work', sourceBranch: 'old', author: aliceOnGitLab, state: 'closed' });
    mergeRequestGid = `gid://gitlab/MergeRequest/${mergeRequest.id}`;
    gitlab.addPipeline(project, { ref: 'feature/sso', status: 'running' });
    // With the workers: code search's file_url needs an index. GitLab's answers about a token are kept for the
    // whole file (AUTH_CACHE_MS at its most), so the requests a test counts are the ones it makes.
    service = await startTestService({
      role: 'all',
      env: {
        GITLAB_URL: gitlab.url,
        GITLAB_SERVICE_TOKEN: serviceToken,
        AUTH_CACHE_MS: '60000',
        MAX_BODY_BYTES: '65536',
        INDEX_DEBOUNCE_MS: '0',
      },
    });
  });
  afterAll(async () => {
    await service?.close();
    await gitlab?.close();
    repo?.destroy();
  });
  afterEach(() => {
    gitlab.up();
    expect(gitlab.violations).toEqual([]);
    // The service's own token never goes with a caller's request, in any header or body.
    expect(gitlab.requests.filter((request) => JSON.stringify(request).includes(serviceToken))).toEqual([]);
  });

  it("lists merge requests as VS Code asks for them, with GitLab's answer and the caller's own token", async () => {
    const path = `/api/v4/projects/${projectId}/merge_requests?state=opened&source_branch=feature%2Fsso`;
    const response = await api(path, { token: alice.token, headers: { 'user-agent': VS_CODE_USER_AGENT } });
    expect(response.status).toBe(200);
    const body = await readJson(response);
    expect(body).toEqual([
      expect.objectContaining({
        title: 'Log in with SSO',
        source_branch: 'feature/sso',
        web_url: `${gitlab.url}/${projectPath}/-/merge_requests/1`,
      }),
    ]);
    const received = lastRequest();
    expect(received).toMatchObject({
      method: 'GET',
      path: `/api/v4/projects/${projectId}/merge_requests`,
      token: alice.token,
      status: 200,
    });
    expect(received.query).toBe('?state=opened&source_branch=feature%2Fsso');
    expect(received.headers['user-agent']).toBe(VS_CODE_USER_AGENT);
    // Our rate limit counted it.
    expect(response.headers.get('ratelimit-remaining')).not.toBeNull();

    const all = await readJson(
      await api(`/api/v4/projects/${encodeURIComponent(projectPath)}/merge_requests?state=all&scope=all`, { token: alice.token }),
    );
    expect(all.map((each: { title: string }) => each.title)).toEqual(['Old work', 'Log in with SSO']);
    const pipelines = await readJson(await api(`/api/v4/projects/${projectId}/pipelines?ref=feature%2Fsso`, { token: alice.token }));
    expect(pipelines).toEqual([expect.objectContaining({ ref: 'feature/sso', status: 'running' })]);
  });

  it('passes an answer larger than our request body limit back whole (the limit is on what callers send)', async () => {
    const group = gitlab.addGroup({ path: unique('busy') });
    const busy = gitlab.addProject({ namespace: group, path: 'monorepo', visibility: 'public' });
    const author = gitlab.addUser({ username: unique('author') });
    for (let index = 0; index < 200; index++)
      gitlab.addMergeRequest(busy, { title: `Change ${index} `.padEnd(200, '.'), sourceBranch: `b${index}`, author });
    const response = await api(`/api/v4/projects/${busy.id}/merge_requests`, { token: alice.token });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text.length).toBeGreaterThan(65_536);
    expect(JSON.parse(text)).toHaveLength(200);
  });

  it('adds no header of ours and passes none GitLab would take from its own proxy', async () => {
    const sent = {
      'PRIVATE-TOKEN': alice.token,
      'user-agent': VS_CODE_USER_AGENT,
      accept: 'application/json',
      cookie: '_gitlab_session=abc123',
      'x-forwarded-for': '10.9.8.7',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
      forwarded: 'for=10.9.8.7;host=evil.example',
      'x-real-ip': '10.9.8.7',
      'x-sendfile-type': 'X-Sendfile',
      'gitlab-workhorse-api-request': 'forged',
      host: 'evil.example',
    };
    const response = await raw(`/api/v4/projects/${projectId}/merge_requests`, { headers: sent });
    expect(response.status).toBe(200);
    const { headers } = lastRequest();
    expect(headers).toMatchObject({ 'private-token': alice.token, cookie: '_gitlab_session=abc123', 'user-agent': VS_CODE_USER_AGENT });
    expect(headers.host).toBe(new URL(gitlab.url).host);
    const sentNames = new Set(Object.keys(sent).map((name) => name.toLowerCase()));
    expect(Object.keys(headers).filter((name) => !TRANSPORT_HEADERS.has(name) && !sentNames.has(name))).toEqual([]);
    for (const name of [
      'x-forwarded-for',
      'x-forwarded-host',
      'x-forwarded-proto',
      'forwarded',
      'x-real-ip',
      'x-sendfile-type',
      'gitlab-workhorse-api-request',
    ]) {
      expect(headers[name]).toBeUndefined();
    }
    expect(headers['x-request-id']).toBeUndefined();
  });

  it("answers /api/v4/version and /api/v4/metadata with GitLab's", async () => {
    for (const path of ['/api/v4/version', '/api/v4/metadata']) {
      const response = await api(path, { headers: { authorization: `Bearer ${alice.token}` } });
      expect(response.status).toBe(200);
      expect(await readJson(response)).toMatchObject({ version: STAND_IN_GITLAB_VERSION, enterprise: true });
      expect(lastRequest()).toMatchObject({ path, token: alice.token });
    }
  });

  it("sends VS Code's project and merge request discussion queries to GitLab unchanged", async () => {
    const before = gitlab.requests.length;
    const body = { query: queryGetProject, variables: { projectPath } };
    const project = await graphql(body);
    expect(project.status).toBe(200);
    expect(await readJson(project)).toEqual({
      data: {
        project: expect.objectContaining({
          fullPath: projectPath,
          httpUrlToRepo: `${gitlab.url}/${projectPath}.git`,
          webUrl: `${gitlab.url}/${projectPath}`,
          group: { id: expect.stringMatching(/^gid:\/\/gitlab\/Group\/\d+$/) },
        }),
      },
    });
    // Byte for byte: the body as VS Code wrote it.
    expect(lastRequest()).toMatchObject({ method: 'POST', path: '/api/graphql', token: alice.token, body: JSON.stringify(body) });

    const discussions = await readJson(
      await graphql({ query: getMrDiscussionsQuery, variables: { projectPath, iid: '1', afterCursor: undefined } }),
    );
    expect(discussions.errors).toBeUndefined();
    const notes = discussions.data.project.mergeRequest.discussions.nodes.flatMap(
      (node: { notes: { nodes: unknown[] } }) => node.notes.nodes,
    );
    expect(notes).toEqual([
      expect.objectContaining({
        body: 'Please add a test for <expired> sessions',
        author: expect.objectContaining({ username: alice.username }),
      }),
    ]);
    expect(gitlab.requests.length).toBe(before + 2);
  });

  it("sends VS Code's CreateNote mutation to GitLab, which adds the note", async () => {
    const body = { query: createNoteMutation, variables: { issuableId: mergeRequestGid, body: 'Done, see the new test' } };
    const response = await graphql(body);
    expect(await readJson(response)).toEqual({ data: { createNote: { errors: [] } } });
    expect(lastRequest().body).toBe(JSON.stringify(body));
    const again = await readJson(await graphql({ query: getMrDiscussionsQuery, variables: { projectPath, iid: '1' } }));
    const bodies = again.data.project.mergeRequest.discussions.nodes.map(
      (node: { notes: { nodes: Array<{ body: string }> } }) => node.notes.nodes[0].body,
    );
    expect(bodies).toContain('Done, see the new test');
  });

  it('answers an operation of ours itself, without passing it on', async () => {
    const before = gitlab.requests.length;
    const response = await readJson(await graphql({ query: `query getUser { currentUser { id username name webUrl } }` }));
    expect(response.data.currentUser).toMatchObject({ username: alice.username, webUrl: `${gitlab.url}/${alice.username}` });
    // The language server's getUser, with a field GitLab added after the version we report: ours, that field null.
    const getUser = `query getUser { currentUser { id username name avatarUrl webUrl
      userPreferences @gl_introduced(version: "18.10.0") { duoDefaultNamespace { id fullName fullPath } } } }`;
    const lsp = await readJson(await graphql({ query: getUser }));
    expect(lsp.data.currentUser).toMatchObject({ username: alice.username, userPreferences: null });
    const user = await readJson(await api('/api/v4/user', { token: alice.token }));
    expect(user.web_url).toBe(`${gitlab.url}/${alice.username}`);
    // GitLab was asked who the token is (the first time) and nothing else: no operation went on to it.
    expect(gitlab.requests.slice(before).map((request) => request.path)).not.toContain('/api/graphql');
    expect(gitlab.requests.slice(before).every((request) => /^\/api\/v4\/(user|personal_access_tokens\/self)$/.test(request.path))).toBe(
      true,
    );
  });

  it("answers a mirrored project's webUrl with the page GitLab gives for it (web_url), not one made from its path", async () => {
    const moved = gitlab.addProject({ namespace: group, path: unique('moved'), visibility: 'private' });
    const fullPath = gitlab.projectFullPath(moved);
    await graphql({ query: `query { currentUser { id } }` });
    // A GitLab under a relative URL root: its pages are not GITLAB_URL/<full path>.
    const page = `${gitlab.url}/gitlab/${fullPath}`;
    gitlab.tamperNext((body) => ({ ...(body as object), web_url: page }));
    const answer = await readJson(await graphql({ query: `query { project(fullPath: "${fullPath}") { fullPath webUrl } }` }));
    expect(answer.data.project).toEqual({ fullPath, webUrl: page });
  });

  it("points code search's file_url at the file on GitLab", async () => {
    // The repository is GitLab's (git http-backend), read with the service token.
    repo = createGitRepo(BILLING_FILES);
    const code = gitlab.addProject({ namespace: group, path: unique('code'), visibility: 'private' });
    const fullPath = gitlab.projectFullPath(code);
    gitlab.git.push({ fullPath, from: repo.path, branch: 'main' });
    const path = `/api/v4/projects/${code.id}/search/semantic?q=${encodeURIComponent('how is the vat amount computed')}`;
    // The first search starts indexing (409), later ones find the code.
    const response = await waitUntil(() => api(path, { token: alice.token }), {
      until: (answer) => answer.status === 200,
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'the project to be indexed',
    });
    const body = await readJson(response);
    expect(body.results[0]).toMatchObject({
      path: 'src/billing/tax.ts',
      file_url: `${gitlab.url}/${fullPath}/-/blob/main/src/billing/tax.ts`,
    });
  });

  it('keeps our depth limit on operations it passes on', async () => {
    const before = gitlab.requests.length;
    const deep = `query { project(fullPath: "${projectPath}") {
      mergeRequest(iid: "1") { discussions { nodes { notes { nodes { author { name } } } } } } } }`;
    expect((await readJson(await graphql({ query: deep }))).data.project.mergeRequest).not.toBeNull();
    const response = await graphql({ query: `query { project(fullPath: "${projectPath}") { ${nest(15)} } }` });
    expect(response.status).toBe(400);
    expect((await readJson(response)).errors[0].message).toBe('Query has depth of 17, which exceeds max depth of 15');
    expect(gitlab.requests.length).toBe(before + 1);
  });

  it("answers a query mixing our fields with GitLab's whole: ours here, the rest from GitLab, merged in order", async () => {
    const query = `
      query mixed($projectPath: ID!, $iid: String!, $unused: String) {
        me: currentUser { username }
        project(fullPath: $projectPath) { mergeRequest(iid: $iid) { title } }
        __typename
      }`;
    const response = await graphql({ query, variables: { projectPath, iid: '1', unused: 'x' } });
    expect(response.status).toBe(200);
    const body = await readJson(response);
    expect(body).toEqual({
      data: { me: { username: alice.username }, project: { mergeRequest: { title: 'Log in with SSO' } }, __typename: 'Query' },
    });
    expect(Object.keys(body.data)).toEqual(['me', 'project', '__typename']);
    // GitLab was asked for its part only, with only the variables that part uses.
    const sentToGitLab = JSON.parse(lastRequest().body);
    expect(sentToGitLab.query).not.toContain('currentUser');
    expect(sentToGitLab.query).toContain('mergeRequest');
    expect(sentToGitLab.variables).toEqual({ projectPath, iid: '1' });
  });

  it("refuses a mutation mixing our fields with GitLab's, naming them, and runs neither part", async () => {
    const before = gitlab.requests.length;
    const query = `
      mutation both($id: NoteableID!) {
        aiAction(input: { chat: { content: "hello" } }) { requestId errors }
        createNote(input: { noteableId: $id, body: "should not be written" }) { errors }
      }`;
    const response = await graphql({ query, variables: { id: mergeRequestGid } });
    expect(response.status).toBe(400);
    const body = await readJson(response);
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/duo-slice answers \(aiAction\).*GitLab answers \(createNote\)/),
        extensions: { code: 'BAD_USER_INPUT', duoSliceFields: ['aiAction'], gitlabFields: ['createNote'] },
      }),
    ]);
    expect(gitlab.requests.length).toBe(before);
    expect(await service.prisma.aiMessage.count({ where: { userId: alice.id } })).toBe(0);
  });

  it('keeps every request on GITLAB_URL: absolute-form targets, dot segments and Host are not followed', async () => {
    const elsewhere: string[] = [];
    const other = http.createServer((request, response) => {
      elsewhere.push(request.url ?? '');
      response.end('{}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherHost = `127.0.0.1:${(other.address() as AddressInfo).port}`;
    const withToken = { headers: { 'private-token': alice.token } };
    try {
      const before = gitlab.requests.length;
      expect((await raw(`http://${otherHost}/api/v4/projects/${projectId}/merge_requests`, withToken)).status).toBe(400);
      expect((await raw(`/api/v4/projects/${projectId}/../../../../${otherHost}/x`, withToken)).status).toBe(400);
      expect((await raw(`/api/v4/%2e%2e/%2E%2E/admin`, withToken)).status).toBe(400);
      expect((await raw(`/api/v4/projects\\..\\admin`, withToken)).status).toBe(400);
      expect(gitlab.requests.length).toBe(before);
      // A Host header names nothing: the request goes to GITLAB_URL with GitLab's own host.
      const hosted = await raw(`/api/v4/projects/${projectId}/merge_requests`, { headers: { ...withToken.headers, host: otherHost } });
      expect(hosted.status).toBe(200);
      expect(lastRequest().headers.host).toBe(new URL(gitlab.url).host);
      expect(elsewhere).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('keeps our body limit on bodies passed through, declared or streamed', async () => {
    const before = gitlab.requests.length;
    const upload = `/api/v4/projects/${projectId}/uploads`;
    const octets = { 'private-token': alice.token, 'content-type': 'application/octet-stream' };
    const declared = await raw(upload, {
      method: 'POST',
      headers: { ...octets, 'content-length': '65537' },
      body: [Buffer.alloc(65_537, 1)],
    });
    expect(declared.status).toBe(413);
    // Chunked: no length said, counted as it comes.
    const streamed = await raw(upload, { method: 'POST', headers: octets, body: Array.from({ length: 20 }, () => Buffer.alloc(8192, 2)) });
    expect(streamed.status).toBe(413);
    const json = await raw(`/api/v4/projects/${projectId}/merge_requests`, {
      method: 'POST',
      headers: { 'private-token': alice.token, 'content-type': 'application/json' },
      body: [Buffer.from(JSON.stringify({ title: 'x'.repeat(70_000) }))],
    });
    expect(json.status).toBe(413);
    expect(gitlab.requests.slice(before).filter((request) => request.method === 'POST')).toEqual([]);
    // Within the limit, a streamed body reaches GitLab whole.
    const small = await raw(upload, { method: 'POST', headers: octets, body: [Buffer.from('part one,'), Buffer.from('part two')] });
    expect(small.status).toBe(404);
    expect(lastRequest()).toMatchObject({ method: 'POST', path: upload, body: 'part one,part two', token: alice.token });
  });

  it("sends the browser to GitLab's own sign-in page and passes the token exchange on", async () => {
    const redirectUri = encodeURIComponent('vscode://gitlab.gitlab-workflow/authentication');
    const authorize = `/oauth/authorize?client_id=abc&redirect_uri=${redirectUri}&response_type=code&state=s1&scope=api`;
    const redirect = await fetch(`${service.url}${authorize}`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe(`${gitlab.url}${authorize}`);

    const before = gitlab.requests.length;
    const code = gitlab.addOAuthCode(alice.id, { scopes: ['api'] });
    const form = `grant_type=authorization_code&code=${code}&redirect_uri=${redirectUri}&client_id=abc`;
    const exchanged = await fetch(`${service.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    expect(exchanged.status).toBe(200);
    const token = await readJson(exchanged);
    expect(token).toMatchObject({ token_type: 'Bearer', scope: 'api', access_token: expect.any(String) });
    expect(gitlab.requests.slice(before)).toEqual([expect.objectContaining({ method: 'POST', path: '/oauth/token', body: form })]);
    const info = await fetch(`${service.url}/oauth/token/info`, { headers: { authorization: `Bearer ${token.access_token}` } });
    expect(await readJson(info)).toMatchObject({ scope: ['api'] });
  });

  it('answers 503 naming GitLab when GitLab does not answer', async () => {
    gitlab.down('refuse');
    const response = await api(`/api/v4/projects/${projectId}/merge_requests`, { token: alice.token });
    expect(response.status).toBe(503);
    expect(await readJson(response)).toEqual({ message: `GitLab at ${gitlab.url} is unavailable` });
    const graph = await readJson(await graphql({ query: queryGetProject, variables: { projectPath } }));
    expect(graph.errors[0]).toMatchObject({
      message: `GitLab at ${gitlab.url} is unavailable`,
      extensions: { code: 'SERVICE_UNAVAILABLE' },
    });
    // A mixed query still gets our part, and an error for each field of GitLab's.
    const mixed = await readJson(
      await graphql({
        query: `query($p: ID!) { currentUser { username } project(fullPath: $p) { httpUrlToRepo } }`,
        variables: { p: projectPath },
      }),
    );
    expect(mixed).toEqual({
      data: { currentUser: { username: alice.username }, project: null },
      errors: [{ message: `GitLab at ${gitlab.url} is unavailable`, path: ['project'], extensions: { code: 'SERVICE_UNAVAILABLE' } }],
    });
  });
});

describe('standalone mode (no GITLAB_URL)', () => {
  let service: TestService;
  let alice: UserWithToken;
  beforeAll(async () => {
    service = await startTestService();
    alice = await userWithToken(service.prisma);
  });
  afterAll(() => service?.close());

  it('answers routes it does not serve with 404, as before, and OAuth sign-in is not sent anywhere', async () => {
    const response = await fetch(`${service.url}/api/v4/projects/1/merge_requests`, { headers: { 'PRIVATE-TOKEN': alice.token } });
    expect(response.status).toBe(404);
    expect(await readJson(response)).toEqual({ message: '404 Not Found' });
    const authorize = await fetch(`${service.url}/oauth/authorize?client_id=abc`, { redirect: 'manual' });
    expect(authorize.status).toBe(404);
    const version = await readJson(await fetch(`${service.url}/api/v4/version`, { headers: { 'PRIVATE-TOKEN': alice.token } }));
    expect(version.version).not.toBe(STAND_IN_GITLAB_VERSION);
    const graph = await fetch(`${service.url}/api/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: queryGetProject, variables: { projectPath: 'a/b' } }),
    });
    const body = await readJson(graph);
    expect(body.errors[0].message).toMatch(/Cannot query field "httpUrlToRepo" on type "Project"/);
  });
});
