import { readJson } from '../helpers/http';
import { usageEventsKey } from '../../src/usage/usage-events';
import { setUserState, revokeToken } from '../../src/users/users.service';
import { userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';

const CURRENT_USER = 'query getUser { currentUser { id username name } }';

describe('authentication over HTTP with real tokens', () => {
  let service: TestService;
  let alice: UserWithToken;

  beforeAll(async () => {
    service = await startTestService();
    alice = await userWithToken(service.prisma, { scopes: ['api'] });
  });
  afterAll(() => service.close());

  const rest = (path: string, headers: Record<string, string> = {}) => fetch(`${service.url}${path}`, { headers });

  it('answers GET /api/v4/version without a token, with the version IDE clients compare', async () => {
    const response = await rest('/api/v4/version');
    expect(response.status).toBe(200);
    const body = await readJson(response);
    expect(body.version).toBe('17.11.0');
    expect(typeof body.revision).toBe('string');
  });

  it.each([
    ['Authorization: Bearer', (token: string) => ({ authorization: `Bearer ${token}` })],
    ['PRIVATE-TOKEN', (token: string) => ({ 'private-token': token })],
  ])('accepts the token in %s', async (_name, headers) => {
    const response = await rest('/api/v4/user', headers(alice.token));
    expect(response.status).toBe(200);
    const body = await readJson(response);
    expect(body).toMatchObject({ id: alice.id, username: alice.username, state: 'active' });
  });

  it('describes the token at /api/v4/personal_access_tokens/self as GitLab does', async () => {
    const response = await rest('/api/v4/personal_access_tokens/self', { authorization: `Bearer ${alice.token}` });
    expect(response.status).toBe(200);
    const body = await readJson(response);
    expect(body).toMatchObject({ user_id: alice.id, scopes: ['api'], active: true, revoked: false, expires_at: null });
    expect(typeof body.id).toBe('number');
    expect(body.last_used_at).not.toBeNull();
  });

  it('stores only a digest of the token', async () => {
    const stored = await service.prisma.personalAccessToken.findMany({ where: { userId: alice.id } });
    expect(stored).toHaveLength(1);
    expect(stored[0].tokenDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(alice.token);
  });

  it('gives anonymous requests a null currentUser and /api/v4/user a 401', async () => {
    const { status, body } = await service.graphql(CURRENT_USER);
    expect(status).toBe(200);
    expect(body).toEqual({ data: { currentUser: null } });
    expect((await rest('/api/v4/user')).status).toBe(401);
  });

  it('treats an empty "Bearer " header (the playground template) as anonymous', async () => {
    const { status, body } = await service.graphql(CURRENT_USER, { token: '' });
    expect(status).toBe(200);
    expect(body).toEqual({ data: { currentUser: null } });
    const response = await fetch(`${service.url}/api/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' },
      body: JSON.stringify({ query: CURRENT_USER }),
    });
    expect(await readJson(response)).toEqual({ data: { currentUser: null } });
  });

  describe('refuses bad credentials with the same 401', () => {
    const cases: Array<[string, () => Promise<string>]> = [
      ['a wrong token', async () => 'glpat-thisisnotarealtoken'],
      [
        'an expired token',
        async () => {
          const user = await userWithToken(service.prisma);
          await service.prisma.personalAccessToken.updateMany({
            where: { userId: user.id },
            data: { expiresAt: new Date(Date.now() - 86_400_000) },
          });
          return user.token;
        },
      ],
      [
        'a token expiring today',
        async () => {
          const user = await userWithToken(service.prisma);
          await service.prisma.personalAccessToken.updateMany({
            where: { userId: user.id },
            data: { expiresAt: new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`) },
          });
          return user.token;
        },
      ],
      [
        'a revoked token',
        async () => {
          const user = await userWithToken(service.prisma);
          await revokeToken(service.prisma, { token: user.token });
          return user.token;
        },
      ],
      [
        'a blocked user',
        async () => {
          const user = await userWithToken(service.prisma);
          await setUserState(service.prisma, user.username, 'blocked');
          return user.token;
        },
      ],
    ];

    it.each(cases)('%s on REST', async (_name, makeToken) => {
      const token = await makeToken();
      const response = await rest('/api/v4/user', { authorization: `Bearer ${token}` });
      expect(response.status).toBe(401);
      expect(await readJson(response)).toEqual({ message: '401 Unauthorized' });
    });

    it.each(cases)('%s on GraphQL', async (_name, makeToken) => {
      const token = await makeToken();
      const { status, body } = await service.graphql(CURRENT_USER, { token });
      expect(status).toBe(401);
      expect(body.data).toBeUndefined();
      expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    });
  });

  describe("REST's token scopes, as GitLab's endpoints declare them", () => {
    const call = (path: string, token: string, method = 'GET', body?: unknown) =>
      fetch(`${service.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    const expectInsufficientScope = async (response: Response, scope: string) => {
      expect(response.status).toBe(403);
      expect(await readJson(response)).toEqual({
        error: 'insufficient_scope',
        error_description: 'The request requires higher privileges than provided by the access token.',
        scope,
      });
      expect(response.headers.get('www-authenticate')).toContain(`error="insufficient_scope"`);
    };

    it('lets a read_api token read, and write nothing', async () => {
      const reader = await userWithToken(service.prisma, { scopes: ['read_api'] });
      expect((await call('/api/v4/user', reader.token)).status).toBe(200);
      const event = { event: 'code_suggestion_shown_in_ide', additional_properties: { label: 'x' } };
      await expectInsufficientScope(await call('/api/v4/usage_data/track_event', reader.token, 'POST', event), 'api');
      const counts = usageEventsKey(service.redisPrefix, new Date());
      expect(await service.running.services.redis.hgetall(counts)).toEqual({});
      // The same event with an api token is counted: the refusal was the scope's.
      expect((await call('/api/v4/usage_data/track_event', alice.token, 'POST', event)).status).toBe(200);
      expect(await service.running.services.redis.hgetall(counts)).not.toEqual({});
    });

    it('lets an ai_features token use the AI endpoints only: not read files or the user', async () => {
      const ai = await userWithToken(service.prisma, { scopes: ['ai_features'] });
      await expectInsufficientScope(await call('/api/v4/projects/1/repository/files/README.md/raw', ai.token), 'api read_api');
      await expectInsufficientScope(await call('/api/v4/user', ai.token), 'api read_api');
      // GitLab's /version takes it (allow_access_with_scope [:read_user, :ai_features]).
      expect((await call('/api/v4/version', ai.token)).status).toBe(200);
      // GraphQL as Express routes it (a trailing slash, another case) is still GraphQL: no REST scope, no REST error shape.
      const graphql = await call('/API/graphql/', ai.token, 'POST', { query: '{ currentUser { id } }' });
      expect(await readJson(graphql)).toEqual({ data: { currentUser: { id: `gid://gitlab/User/${ai.id}` } } });
      await expectInsufficientScope(await call('/api/v4/projects/1/search/semantic?q=x', ai.token), 'api read_api mcp');
      // Past the scope: the completions endpoint answers for the missing seat (GitLab's 401), not 403.
      const completion = await call('/api/v4/code_suggestions/completions', ai.token, 'POST', {
        current_file: { file_name: 'a.ts', content_above_cursor: 'const a = ', content_below_cursor: '' },
      });
      expect(completion.status).toBe(401);
      // A read_api token may not POST to it.
      const reader = await userWithToken(service.prisma, { scopes: ['read_api'] });
      await expectInsufficientScope(
        await call('/api/v4/code_suggestions/completions', reader.token, 'POST', { current_file: { file_name: 'a.ts' } }),
        'api ai_features',
      );
    });

    it('lets a token of any scope read itself at personal_access_tokens/self', async () => {
      for (const scope of ['read_api', 'ai_features', 'mcp']) {
        const user = await userWithToken(service.prisma, { scopes: [scope] });
        const response = await call('/api/v4/personal_access_tokens/self', user.token);
        expect(response.status).toBe(200);
        expect(await readJson(response)).toMatchObject({ user_id: user.id, scopes: [scope] });
      }
    });
  });

  describe('token scopes on mutations', () => {
    const DELETE_THREAD =
      'mutation { deleteConversationThread(input: { threadId: "gid://gitlab/Ai::Conversation::Thread/999999" }) { success errors } }';

    it('refuses any mutation to a read_api token, before the resolver runs', async () => {
      const reader = await userWithToken(service.prisma, { scopes: ['read_api'] });
      const thread = await service.prisma.aiConversationThread.create({ data: { userId: reader.id, conversationType: 'duo_chat' } });
      const { body } = await service.graphql(
        `mutation { deleteConversationThread(input: { threadId: "gid://gitlab/Ai::Conversation::Thread/${thread.id}" }) { success } }`,
        { token: reader.token },
      );
      expect(body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(await service.prisma.aiConversationThread.count({ where: { id: thread.id } })).toBe(1);
    });

    it('lets read_api tokens read', async () => {
      const reader = await userWithToken(service.prisma, { scopes: ['read_api'] });
      const { body } = await service.graphql(CURRENT_USER, { token: reader.token });
      expect(body.data).toEqual({ currentUser: expect.objectContaining({ username: reader.username }) });
    });

    it.each([['api'], ['ai_features']])('lets a %s token run the AI mutations', async (scope) => {
      const user = await userWithToken(service.prisma, { scopes: [scope] });
      const { body } = await service.graphql(DELETE_THREAD, { token: user.token });
      // Reaches the resolver, which answers for the missing thread.
      expect(body.errors?.[0]).toMatchObject({ message: 'Thread not found. It may have expired.', extensions: { code: 'NOT_FOUND' } });
    });

    it('lets only api and read_api tokens search code (an ai_features token reaches code through chat only)', async () => {
      const SEARCH = 'query { codebaseSearch(projectPath: "nobody/nothing", query: "invoice") { path } }';
      const ai = await userWithToken(service.prisma, { scopes: ['ai_features'] });
      const refused = await service.graphql(SEARCH, { token: ai.token });
      expect(refused.body.errors?.[0]).toMatchObject({
        message: 'Insufficient token scope: codebaseSearch needs a token with the api or read_api scope',
        extensions: { code: 'FORBIDDEN' },
      });
      // Its other reads still run.
      expect((await service.graphql(CURRENT_USER, { token: ai.token })).body.data).toEqual({
        currentUser: expect.objectContaining({ username: ai.username }),
      });
      // A read_api token reaches the resolver, which answers for itself (this user has no Duo seat).
      const reader = await userWithToken(service.prisma, { scopes: ['read_api'] });
      const read = await service.graphql(SEARCH, { token: reader.token });
      expect(read.body.errors?.[0]?.message).toBeDefined();
      expect(read.body.errors?.[0]?.message).not.toContain('Insufficient token scope');
    });

    it('requires a signed-in user for mutations', async () => {
      const { body } = await service.graphql(DELETE_THREAD);
      expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    });
  });
});
