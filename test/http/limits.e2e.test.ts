import { readJson } from '../helpers/http';
import { userWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';

describe('guard rails', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({
      env: { RATE_LIMIT_PER_MINUTE: '5', MAX_BODY_BYTES: '2000', GRAPHQL_MAX_DEPTH: '3', GRAPHQL_MAX_COMPLEXITY: '6' },
    });
  });
  afterAll(() => service.close());

  it('limits each user per minute, in Redis, with 429 on REST and RATE_LIMITED on GraphQL', async () => {
    const user = await userWithToken(service.prisma);
    const other = await userWithToken(service.prisma);
    const statuses: number[] = [];
    for (let index = 0; index < 5; index += 1) {
      statuses.push((await fetch(`${service.url}/api/v4/user`, { headers: { authorization: `Bearer ${user.token}` } })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const limited = await fetch(`${service.url}/api/v4/user`, { headers: { authorization: `Bearer ${user.token}` } });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const graphql = await service.graphql('{ currentUser { id } }', { token: user.token });
    expect(graphql.status).toBe(429);
    expect(graphql.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    // Another user has a budget of their own.
    expect((await fetch(`${service.url}/api/v4/user`, { headers: { authorization: `Bearer ${other.token}` } })).status).toBe(200);
    const keys = await service.running.services.redis.keys(`${service.redisPrefix}:rate*`);
    expect(keys.length).toBeGreaterThanOrEqual(2);
  });

  it('refuses a body over the limit with 413 and stores nothing', async () => {
    const user = await userWithToken(service.prisma);
    const before = await service.prisma.aiConversationThread.count();
    const response = await fetch(`${service.url}/api/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ query: `{ currentUser { id } } # ${'x'.repeat(3000)}` }),
    });
    expect(response.status).toBe(413);
    expect((await readJson(response)).errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(await service.prisma.aiConversationThread.count()).toBe(before);
  });

  it('refuses queries deeper than GRAPHQL_MAX_DEPTH, counting fragments', async () => {
    const user = await userWithToken(service.prisma);
    const query = `query { ...A } fragment A on Query { project(fullPath: "x") { ...B } } fragment B on Project { id }`;
    expect((await service.graphql(query, { token: user.token })).body.errors).toBeUndefined();
    const deep = `query { __typename a: currentUser { id } b: project(fullPath: "x") { id } }`;
    expect((await service.graphql(deep, { token: user.token })).body.errors).toBeUndefined();
    const tooDeep = `query { __schema { types { fields { type { fields { name } } } } } }`;
    const { body } = await service.graphql(tooDeep, { token: user.token });
    expect(body.errors?.[0]?.message).toMatch(/exceeds max depth of 3/);
  });

  it('refuses queries costlier than GRAPHQL_MAX_COMPLEXITY', async () => {
    const user = await userWithToken(service.prisma);
    const query = `{ a: currentUser { id username name } b: currentUser { id username name } }`;
    const { body } = await service.graphql(query, { token: user.token });
    expect(body.errors?.[0]).toMatchObject({
      message: expect.stringMatching(/complexity of 8, which exceeds max complexity of 6/),
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });

  it('counts the cost of a query sent again, and of one whose @include takes a variable, on every request', async () => {
    const user = await userWithToken(service.prisma);
    // A query's cost is kept with its parsed document: the second request is refused as the first was.
    const query = `{ a: currentUser { id username name } b: currentUser { id username name } }`;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const { body } = await service.graphql(query, { token: user.token });
      expect(body.errors?.[0]?.message).toMatch(/complexity of 8, which exceeds max complexity of 6/);
    }
    // With a variable in @include the cost changes with the request: never taken from an earlier one.
    const other = await userWithToken(service.prisma);
    const optional =
      'query($all: Boolean!) { a: currentUser { id username name } ' + 'b: currentUser @include(if: $all) { id username name } }';
    const answers = [];
    for (const all of [false, true, false])
      answers.push((await service.graphql(optional, { token: other.token, variables: { all } })).body);
    expect(answers[0]).toEqual({ data: { a: expect.objectContaining({ username: expect.any(String) }) } });
    expect(answers[1].errors?.[0]?.message).toMatch(/complexity of 8, which exceeds max complexity of 6/);
    expect(answers[2].errors).toBeUndefined();
  });

  it('answers malformed JSON with 400, and unknown API paths with 404', async () => {
    const bad = await fetch(`${service.url}/api/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":',
    });
    expect(bad.status).toBe(400);
    const missing = await fetch(`${service.url}/api/v4/nothing-here`);
    expect(missing.status).toBe(404);
    expect(await readJson(missing)).toEqual({ message: '404 Not Found' });
  });

  it('names a bad global id, written inline or passed as a variable', async () => {
    const user = await userWithToken(service.prisma);
    const inline = await service.graphql('mutation { deleteConversationThread(input: { threadId: "not-a-gid" }) { success } }', {
      token: user.token,
    });
    expect(inline.body.errors?.[0]?.message).toContain('"not-a-gid" is not a valid Global ID');
    expect(inline.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const variable = await service.graphql(
      'mutation($id: AiConversationThreadID!) { deleteConversationThread(input: { threadId: $id }) { success } }',
      {
        token: user.token,
        variables: { id: 'not-a-gid' },
      },
    );
    expect(variable.body.errors?.[0]?.message).toContain('"not-a-gid" is not a valid Global ID');
    expect(variable.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
