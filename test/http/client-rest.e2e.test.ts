import { usageEventsKey } from '../../src/usage/usage-events';
import { revokeToken } from '../../src/users/users.service';
import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { readJson } from '../helpers/http';
import { startTestService, type TestService } from '../helpers/test-service';

// The token and code-suggestion REST calls GitLab's language server makes besides the completions
// themselves, answered as a GitLab instance without direct connections answers them.
describe('REST calls of the language server: token info, direct access, connection details', () => {
  let service: TestService;
  let seated: UserWithToken;
  let noSeat: UserWithToken;

  beforeAll(async () => {
    service = await startTestService({ env: { EXTERNAL_URL: 'https://duo.example.com' } });
    seated = await userWithToken(service.prisma, { scopes: ['api', 'ai_features'], expiresAt: '2099-01-01' });
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: seated.username });
    noSeat = await userWithToken(service.prisma);
  });
  afterAll(() => service.close());

  const request = (method: string, path: string, token: string | null) =>
    fetch(`${service.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: method === 'POST' ? '{}' : undefined,
    });

  it("answers /oauth/token/info for our tokens in Doorkeeper's shape", async () => {
    const response = await request('GET', '/oauth/token/info', seated.token);
    expect(response.status).toBe(200);
    const body = await readJson(response);
    expect(body).toEqual({
      resource_owner_id: seated.id,
      scope: ['api', 'ai_features'],
      scopes: ['api', 'ai_features'],
      expires_in: expect.any(Number),
      expires_in_seconds: expect.any(Number),
      application: { uid: null },
      created_at: expect.any(Number),
    });
    expect(body.expires_in).toBeGreaterThan(60 * 60 * 24 * 365 * 50);
    expect(Math.abs(body.created_at - Date.now() / 1000)).toBeLessThan(600);
    const forever = await readJson(await request('GET', '/oauth/token/info', noSeat.token));
    expect(forever).toMatchObject({ resource_owner_id: noSeat.id, expires_in: null });
  });

  it("answers Doorkeeper's 401 for a missing, wrong or revoked token, and takes an mcp-only token", async () => {
    const revoked = await userWithToken(service.prisma);
    await revokeToken(service.prisma, { token: revoked.token });
    for (const token of [null, 'glpat-wrongwrongwrongwrong', revoked.token]) {
      const response = await request('GET', '/oauth/token/info', token);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="Doorkeeper"/);
      expect(await readJson(response)).toEqual({
        error: 'invalid_token',
        error_description: 'The access token is invalid',
        state: 'unauthorized',
      });
    }
    const mcpOnly = await userWithToken(service.prisma, { scopes: ['mcp'] });
    expect(await readJson(await request('GET', '/oauth/token/info', mcpOnly.token))).toMatchObject({ scope: ['mcp'] });
  });

  it('refuses direct connections with 403 as an instance that turned them off, so the client uses /completions', async () => {
    const response = await request('POST', '/api/v4/code_suggestions/direct_access', seated.token);
    expect(response.status).toBe(403);
    expect(await readJson(response)).toEqual({ message: '403 Forbidden - Direct connections are disabled' });
    // Without Duo: GitLab's 401 with the monolith origin, before anything else.
    const refused = await request('POST', '/api/v4/code_suggestions/direct_access', noSeat.token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-gitlab-error-origin')).toBe('monolith');
  });

  it('answers connection_details with 201 and the instance details, without the user id in plain', async () => {
    const response = await request('POST', '/api/v4/code_suggestions/connection_details', seated.token);
    expect(response.status).toBe(201);
    const body = await readJson(response);
    const version = (await readJson(await request('GET', '/api/v4/version', null))).version;
    expect(body).toEqual({
      instance_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      instance_version: version,
      realm: 'self-managed',
      global_user_id: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
      host_name: 'duo.example.com',
      feature_enablement_type: 'duo_enterprise',
      saas_duo_pro_namespace_ids: [],
    });
    const again = await readJson(await request('POST', '/api/v4/code_suggestions/connection_details', seated.token));
    expect(again).toEqual(body);
    const other = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: other.username });
    const otherBody = await readJson(await request('POST', '/api/v4/code_suggestions/connection_details', other.token));
    expect(otherBody).toMatchObject({ instance_id: body.instance_id, feature_enablement_type: 'duo_pro' });
    expect(otherBody.global_user_id).not.toBe(body.global_user_id);
    expect((await request('POST', '/api/v4/code_suggestions/connection_details', noSeat.token)).status).toBe(401);
    expect((await request('POST', '/api/v4/code_suggestions/connection_details', null)).status).toBe(401);
  });

  it('counts the suggestion events the language server tracks, validates them as GitLab does, and needs a token', async () => {
    const track = (body: unknown, token: string | null = seated.token) =>
      fetch(`${service.url}/api/v4/usage_data/track_event`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
    for (const event of [
      'code_suggestion_shown_in_ide',
      'code_suggestion_shown_in_ide',
      'code_suggestion_accepted_in_ide',
      'some_other_event',
    ]) {
      const response = await track({ event, additional_properties: { language: 'python', suggestion_size: 3 } });
      expect(response.status).toBe(200);
      expect(await readJson(response)).toEqual({});
    }
    const counts = await service.running.services.redis.hgetall(usageEventsKey(service.redisPrefix, new Date()));
    expect(counts).toEqual({ code_suggestion_shown_in_ide: '2', code_suggestion_accepted_in_ide: '1' });
    for (const [body, error, field] of [
      [{}, 'event is missing', 'event'],
      [{ event: 42 }, 'event is invalid', 'event'],
      [{ event: 'x', project_id: 'abc' }, 'project_id is invalid', 'project_id'],
      [{ event: 'x', additional_properties: [1] }, 'additional_properties is invalid', 'additional_properties'],
    ] as const) {
      const refused = await track(body);
      expect(refused.status).toBe(400);
      expect(await readJson(refused)).toEqual({ error, field });
    }
    expect((await track({ event: 'code_suggestion_shown_in_ide' }, null)).status).toBe(401);
    expect(await service.running.services.redis.hget(usageEventsKey(service.redisPrefix, new Date()), 'code_suggestion_shown_in_ide')).toBe(
      '2',
    );
  });

  it('describes a token at personal_access_tokens/self with the fields the language server checks', async () => {
    const body = await readJson(await request('GET', '/api/v4/personal_access_tokens/self', seated.token));
    expect(body).toMatchObject({
      active: true,
      revoked: false,
      scopes: ['api', 'ai_features'],
      user_id: seated.id,
      expires_at: '2099-01-01',
    });
  });
});
