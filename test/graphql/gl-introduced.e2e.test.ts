import { createHash } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { openRawCable } from '../helpers/cable-clients';
import { wsClient } from '../helpers/chat-client';
import { userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';
import { loadFixtures } from '../conformance/fixture-format';

// GitLab's @gl_introduced through every transport that parses GraphQL: POST /api/graphql,
// graphql-ws and ActionCable's GraphqlChannel, with the documents the language server sends. The
// rules on their own: gl-introduced.test.ts.

/** The language server's getUser, byte for byte: it sends it to every version. */
const GET_USER = loadFixtures('graphql').find((fixture) => fixture.client === 'gitlab-lsp' && fixture.name === 'getUser')!.document!;

type Answer = { data?: Record<string, unknown> | null; errors?: Array<{ message: string; extensions?: { code?: string } }> };

const WITH_VARIABLES = `query withContext($projectPath: ID!, $first: Int) {
  currentUser {
    username
    userPreferences @gl_introduced(version: "18.10.0") {
      duoDefaultNamespace(first: $first) { ...namespace }
    }
  }
  project(fullPath: $projectPath) @gl_introduced(version: "18.2.0") { duoContextExclusionSettings { exclusionRules } }
}
fragment namespace on Namespace { id fullPath }`;

const stripped = (count: number) => Array.from({ length: count }, (_, index) => `f${index} @gl_introduced(version: "99.0.0")`).join(' ');

describe('@gl_introduced', () => {
  let service: TestService;
  let alice: UserWithToken;
  let currentUser: Record<string, unknown>;

  beforeAll(async () => {
    service = await startTestService();
    alice = await userWithToken(service.prisma);
    const { body } = await service.graphql<{ currentUser: Record<string, unknown> }>(
      '{ currentUser { id username name avatarUrl webUrl } }',
      {
        token: alice.token,
      },
    );
    currentUser = body.data!.currentUser;
  });
  afterAll(async () => {
    await service?.close();
  });

  async function overHttp(query: string, variables: Record<string, unknown> = {}, operationName?: string) {
    const response = await fetch(`${service.url}/api/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${alice.token}` },
      body: JSON.stringify({ query, variables, operationName }),
    });
    return { status: response.status, body: (await response.json()) as Answer };
  }

  /** One query over graphql-ws: its single result. */
  async function overGraphqlWs(client: Client, query: string, variables: Record<string, unknown> = {}): Promise<Answer> {
    return new Promise((resolve, reject) => {
      let answer: Answer | undefined;
      client.subscribe(
        { query, variables },
        { next: (result) => void (answer = result as Answer), error: reject, complete: () => resolve(answer!) },
      );
    });
  }

  /** One query over ActionCable, as the language server subscribes (variables as a JSON string): its single message. */
  async function overCable(query: string, variables: Record<string, unknown>, operationName: string) {
    const cable = await openRawCable(`${service.url.replace(/^http/, 'ws')}/-/cable`, { token: alice.token });
    try {
      expect(await cable.take()).toEqual({ type: 'welcome' });
      const identifier = JSON.stringify({ channel: 'GraphqlChannel', query, variables: JSON.stringify(variables), operationName });
      cable.send({ command: 'subscribe', identifier });
      expect(await cable.take()).toEqual({ identifier, type: 'confirm_subscription' });
      return (await cable.take()).message as { result: Answer; more: boolean };
    } finally {
      await cable.close();
    }
  }

  it("answers the language server's getUser with userPreferences null (introduced in 18.10)", async () => {
    const { status, body } = await overHttp(GET_USER, {}, 'getUser');
    expect(status).toBe(200);
    expect(body).toEqual({ data: { currentUser: { ...currentUser, userPreferences: null } } });
    expect(currentUser).toMatchObject({ id: `gid://gitlab/User/${alice.id}`, username: alice.username });
  });

  it('answers it as an automatic persisted query too, registered and then by its hash', async () => {
    const sha256Hash = createHash('sha256').update(GET_USER).digest('hex');
    const post = async (body: Record<string, unknown>) => {
      const response = await fetch(`${service.url}/api/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${alice.token}` },
        body: JSON.stringify({ ...body, extensions: { persistedQuery: { version: 1, sha256Hash } } }),
      });
      return { status: response.status, body: (await response.json()) as Answer };
    };
    const expected = { status: 200, body: { data: { currentUser: { ...currentUser, userPreferences: null } } } };
    expect(await post({ query: GET_USER, operationName: 'getUser' })).toEqual(expected);
    // The hash alone names the client's text, not the filtered one: Apollo asks for the text, as for any new query.
    expect((await post({ operationName: 'getUser' })).body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    // A hash that does not name the text sent is refused, as before, and said so.
    expect(await post({ query: `${GET_USER} `, operationName: 'getUser' })).toEqual({
      status: 400,
      body: { errors: [{ message: 'provided sha does not match query', extensions: { code: 'BAD_REQUEST' } }] },
    });
  });

  it('serves fields tagged with our version or an older one, and ignores a tag it cannot read', async () => {
    const query = `{ currentUser {
      username @gl_introduced(version: "17.0.0")
      name @gl_introduced(version: "17.11.0")
      webUrl @gl_introduced(version: "banana")
    } }`;
    const { body } = await overHttp(query);
    expect(body).toEqual({ data: { currentUser: { username: alice.username, name: currentUser.name, webUrl: currentUser.webUrl } } });
  });

  it('leaves no unused variable or fragment behind when only a stripped subtree used them', async () => {
    const { status, body } = await overHttp(WITH_VARIABLES, { projectPath: 'group/project', first: 1 });
    expect(status).toBe(200);
    expect(body).toEqual({ data: { currentUser: { username: alice.username, userPreferences: null }, project: null } });
  });

  it('answers a parent whose only selection was stripped, and the operation whose only field was', async () => {
    const onlyChild = await overHttp(
      'query { currentUser { userPreferences @gl_introduced(version: "18.10.0") { duoDefaultNamespace { id } } } }',
    );
    expect(onlyChild.body).toEqual({ data: { currentUser: { userPreferences: null } } });
    const onlyRoot = await overHttp('query agents { aiCatalogItems @gl_introduced(version: "18.2.0") { nodes { id } } }');
    expect(onlyRoot.body).toEqual({ data: { aiCatalogItems: null } });
  });

  it('still refuses a field our schema lacks when it is not tagged, or tagged with a version we have', async () => {
    const untagged = GET_USER.replace(' @gl_introduced(version: "18.10.0")', '');
    const older = GET_USER.replace('"18.10.0"', '"17.0.0"');
    for (const query of [untagged, older]) {
      const { status, body } = await overHttp(query);
      expect(status).toBe(400);
      expect(body.errors).toEqual([
        expect.objectContaining({
          message: 'Cannot query field "userPreferences" on type "CurrentUser".',
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
        }),
      ]);
    }
  });

  it('counts stripped fields toward the token, depth and cost limits', async () => {
    // Defaults: 5,000 tokens, depth 15, cost 250; each stripped field is 8 tokens.
    const tokens = await overHttp(`{ currentUser { id ${stripped(700)} } }`);
    expect(tokens.body.errors?.[0]).toMatchObject({
      message: expect.stringContaining('5000 tokens'),
      extensions: { code: 'GRAPHQL_PARSE_FAILED' },
    });
    const deep = await overHttp(
      `{ currentUser { id future @gl_introduced(version: "99.0.0") { ${'a { '.repeat(20)}b${' }'.repeat(20)} } } }`,
    );
    expect(deep.body.errors?.[0].message).toBe('Query has depth of 23, which exceeds max depth of 15');
    const costly = await overHttp(`{ currentUser { id ${stripped(300)} } }`);
    expect(costly.body.errors?.[0].message).toBe('Query has complexity of 302, which exceeds max complexity of 250');
  });

  it('answers the same over graphql-ws, limits included', async () => {
    const client = wsClient(service.url, alice.token);
    try {
      expect(await overGraphqlWs(client, GET_USER)).toEqual({ data: { currentUser: { ...currentUser, userPreferences: null } } });
      expect(await overGraphqlWs(client, WITH_VARIABLES, { projectPath: 'group/project' })).toEqual({
        data: { currentUser: { username: alice.username, userPreferences: null }, project: null },
      });
      const costly = await overGraphqlWs(client, `{ currentUser { id ${stripped(300)} } }`).catch((errors: Answer['errors']) => ({
        errors,
      }));
      expect(costly.errors?.[0].message).toBe('Query has complexity of 302, which exceeds max complexity of 250');
    } finally {
      await client.dispose();
    }
  });

  it('answers the same over ActionCable, limits included', async () => {
    expect(await overCable(GET_USER, {}, 'getUser')).toEqual({
      result: { data: { currentUser: { ...currentUser, userPreferences: null } } },
      more: false,
    });
    expect(await overCable(WITH_VARIABLES, { projectPath: 'group/project' }, 'withContext')).toEqual({
      result: { data: { currentUser: { username: alice.username, userPreferences: null }, project: null } },
      more: false,
    });
    const deep = await overCable(
      `query deep { currentUser { future @gl_introduced(version: "99.0.0") { ${'a { '.repeat(20)}b${' }'.repeat(20)} } } }`,
      {},
      'deep',
    );
    expect(deep.result.errors?.[0].message).toBe('Query has depth of 23, which exceeds max depth of 15');
  });
});
