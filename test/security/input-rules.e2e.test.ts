import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { digestToken } from '../../src/auth/tokens';
import { addMember, assignSeat, createProject } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { openRawCable } from '../helpers/cable-clients';
import { startTestService, type TestService } from '../helpers/test-service';
import { deepJson, overCable, overGraphqlWs, overHttp, type Operation, type TransportResult } from './transports';

// Inputs refused on every transport, writing nothing, and limits that hold on each: what a probe of
// every transport found open (each of these failed on 7a6374f).
const CHAT = `mutation chat($question: String!, $additionalContext: [AiAdditionalContextInput!]) {
  aiAction(input: { chat: { content: $question, additionalContext: $additionalContext, skipGatekeeper: true }, platformOrigin: "x",
  conversationType: DUO_CHAT }) { requestId threadId errors }
}`;
const SECRET = 'probe-hook-secret';

type McpMessage = { result?: { content: Array<{ text: string }>; isError?: boolean }; error?: { code: number; message: string } };
type McpReply = McpMessage & McpMessage[];

describe('input rules and limits on every transport', () => {
  let service: TestService;
  let user: UserWithToken;
  let mcpUser: UserWithToken;
  let projectPath: string;

  const counts = async () => ({
    messages: await service.prisma.aiMessage.count(),
    threads: await service.prisma.aiConversationThread.count(),
    items: await service.prisma.aiMessageContextItem.count(),
    feedback: await service.prisma.aiMessageFeedback.count(),
    suggestionFeedback: await service.prisma.codeSuggestionFeedback.count(),
    indexes: await service.prisma.codeIndex.count(),
  });
  const mcp = async (body: unknown, token = mcpUser.token) => {
    const response = await fetch(`${service.url}/api/v4/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as McpReply };
  };
  const tool = (name: string, args: unknown, id = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

  beforeAll(async () => {
    service = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '30' } });
    user = await userWithToken(service.prisma);
    mcpUser = await userWithToken(service.prisma, { scopes: ['mcp'] });
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    await assignSeat(service.prisma, { groupPath: group, addOn: 'duo_enterprise', username: mcpUser.username });
    const { project } = await createProject(service.prisma, { fullPath: `${group}/${unique('p')}` });
    projectPath = project.fullPath;
    await addMember(service.prisma, { fullPath: projectPath, username: user.username, accessLevel: 'maintainer' });
    await addMember(service.prisma, { fullPath: projectPath, username: mcpUser.username, accessLevel: 'developer' });
    await service.prisma.project.update({ where: { id: project.id }, data: { webhookSecretDigest: digestToken(SECRET) } });
  });
  afterAll(() => service.close());

  const transports: Array<[string, (operation: Operation) => Promise<TransportResult>]> = [
    ['POST /api/graphql', (operation) => overHttp(service.url, operation)],
    ['graphql-ws', (operation) => overGraphqlWs(service.url, operation)],
    ['ActionCable', (operation) => overCable(service.url, operation)],
  ];

  it.each(transports)(
    '%s: projects(ids:) with a Project id past int4 is a project that does not exist, not an error',
    async (_name, send) => {
      const result = await send({
        query: `query { projects(ids: ["gid://gitlab/Project/9999999999"]) { nodes { id } } }`,
        token: user.token,
      });
      expect(result.errors).toBeUndefined();
      expect(result.data).toEqual({ projects: { nodes: [] } });
    },
  );

  it('aiAction: a lone surrogate in context metadata (jsonb) is BAD_USER_INPUT, not INTERNAL_SERVER_ERROR', async () => {
    const before = await counts();
    const result = await overHttp(service.url, {
      query: CHAT,
      variables: {
        question: 'explain this code',
        additionalContext: [{ id: 'a', category: 'SNIPPET', content: 'x', metadata: { k: '\ud800' } }],
      },
      token: user.token,
    });
    expect(await counts()).toEqual(before);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('duoUserFeedback: a lone surrogate in trackingEvent.extra is BAD_USER_INPUT, not INTERNAL_SERVER_ERROR', async () => {
    const accepted = await overHttp(service.url, { query: CHAT, variables: { question: 'explain this code please' }, token: user.token });
    expect(accepted.errors).toBeUndefined();
    const message = await service.prisma.aiMessage.findFirstOrThrow({ where: { userId: user.id, role: 'user' } });
    const before = await counts();
    const result = await overHttp(service.url, {
      query: `mutation($input: DuoUserFeedbackInput!) { duoUserFeedback(input: $input) { errors } }`,
      variables: {
        input: { aiMessageId: message.id, trackingEvent: { action: 'click', category: 'c', extra: { improveWhat: '\udc00' } } },
      },
      token: user.token,
    });
    expect(await counts()).toEqual(before);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('aiAction: a lone surrogate in content is refused, not stored as U+FFFD', async () => {
    const before = await counts();
    const result = await overHttp(service.url, { query: CHAT, variables: { question: 'explain \ud800 this code' }, token: user.token });
    const stored = await service.prisma.aiMessage.findFirst({ where: { content: { contains: '\ufffd' } } });
    expect(stored).toBeNull();
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(await counts()).toEqual(before);
  });

  it.each([
    ['type', { type: 't'.repeat(3_000_000) }],
    ['schemaVersion', { schemaVersion: `v0.0.${'9'.repeat(2_000_000)}` }],
    ['disabledReasons', { isEnabled: true, disabledReasons: Array.from({ length: 200_000 }, () => 'r') }],
  ])('aiAction: additionalContext %s has a limit (refused, nothing stored)', async (field, extra) => {
    const before = await counts();
    const result = await overHttp(service.url, {
      query: CHAT,
      variables: { question: 'explain this code', additionalContext: [{ id: `i-${field}`, category: 'SNIPPET', content: 'x', ...extra }] },
      token: user.token,
    });
    expect(await counts()).toEqual(before);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('codeSuggestionFeedback: a 3 MB finalText is refused, nothing stored', async () => {
    const session = await service.prisma.codeSuggestionSession.create({
      data: { id: randomUUID(), userId: user.id, fileName: 'a.ts', content: 'x', cursorOffset: 0 },
    });
    const suggestion = await service.prisma.codeSuggestion.create({
      data: { id: randomUUID(), sessionId: session.id, revision: 1, content: 'x', cursorOffset: 0, intent: 'completion', text: 'y' },
    });
    const before = await counts();
    const result = await overHttp(service.url, {
      query: `mutation($input: CodeSuggestionFeedbackInput!) { codeSuggestionFeedback(input: $input) { errors } }`,
      variables: { input: { sessionId: session.id, suggestionId: suggestion.id, event: 'REJECTED', finalText: 'f'.repeat(3_000_000) } },
      token: user.token,
    });
    expect(await counts()).toEqual(before);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('MCP: semantic_query "???" (refused by REST and GraphQL) is refused and queues no index run', async () => {
    const before = await counts();
    const rest = await fetch(`${service.url}/api/v4/projects/${encodeURIComponent(projectPath)}/search/semantic?q=%3F%3F%3F`, {
      headers: { authorization: `Bearer ${mcpUser.token}` },
    });
    expect(rest.status).toBe(400);
    expect(await counts()).toEqual(before);
    const { body } = await mcp(tool('semantic_code_search', { semantic_query: '???', project_id: projectPath }));
    expect(await counts()).toEqual(before);
    expect(body.result!.content[0].text).toContain('nothing to search for');
  });

  it('MCP: a NUL byte in an argument is refused with a clear JSON-RPC error naming it, not "internal error"', async () => {
    const { status, body } = await mcp(tool('get_code_index_status', { project_id: `${projectPath}\u0000` }));
    expect(status).toBe(400);
    expect(body.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/^params\.arguments\.project_id contains a NUL byte/),
    });
  });

  it('MCP: a JSON-RPC body nested deeper than MAX_JSON_DEPTH is refused like every other JSON input', async () => {
    const { status, body } = await mcp(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_mcp_server_version","arguments":{"x":${deepJson(5000)}}}}`,
    );
    expect(status).toBe(400);
    expect(body.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/^params\.arguments\.x(\.a)+ is nested deeper than \d+ levels$/),
    });
  });

  it('MCP: a batch of 100 tool calls takes 100 from the rate budget, not 1 (RATE_LIMIT_PER_MINUTE=30)', async () => {
    const other = await userWithToken(service.prisma, { scopes: ['mcp'] });
    const batch = Array.from({ length: 100 }, (_, index) => tool('get_mcp_server_version', {}, index));
    const first = await mcp(batch, other.token);
    const second = await mcp(batch, other.token);
    const third = await mcp(batch, other.token);
    const answered = [first, second, third]
      .flatMap((reply) => (Array.isArray(reply.body) ? reply.body : []))
      .filter((reply: McpMessage) => reply.result);
    expect(answered.length).toBeLessThanOrEqual(30);
  });

  it('graphql-ws: a subscription id longer than 255 characters is refused (every event would carry it)', async () => {
    const reply = await new Promise<{ type: string; id?: string; payload?: Array<{ extensions?: { code?: string; field?: string } }> }>(
      (resolve, reject) => {
        const socket = new WebSocket(`${service.url.replace(/^http/, 'ws')}/api/graphql`, 'graphql-transport-ws');
        socket.on('error', reject);
        socket.on('open', () =>
          socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${user.token}` } })),
        );
        socket.on('message', (data) => {
          const message = JSON.parse((data as Buffer).toString('utf8')) as { type: string };
          if (message.type === 'connection_ack')
            socket.send(JSON.stringify({ type: 'subscribe', id: 'x'.repeat(256), payload: { query: '{ currentUser { id } }' } }));
          else {
            resolve(message);
            socket.close();
          }
        });
      },
    );
    expect(reply.type).toBe('error');
    expect(reply.payload?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'id' });
  });

  it('graphql-ws: an Authorization that is not a string is a wrong token (4403), not anonymous', async () => {
    const closed = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${service.url.replace(/^http/, 'ws')}/api/graphql`, 'graphql-transport-ws');
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: 123 } })));
      socket.on('close', (code) => resolve(code));
      socket.on('message', () => socket.close(1000));
    });
    expect(closed).toBe(4403);
  });

  it.each(transports)("%s: a NUL byte in a variable's default value is refused like one written inline", async (_name, send) => {
    const before = await counts();
    const result = await send({
      query: 'query($p: ID! = "a\\u0000b") { project(fullPath: $p) { id } }',
      token: user.token,
    });
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await counts()).toEqual(before);
  });

  it('MCP: a request is counted before its body is read: with the budget spent, a broken body gets 429, not 400', async () => {
    const spender = await userWithToken(service.prisma, { scopes: ['mcp'] });
    let status = 0;
    for (let index = 0; index < 40 && status !== 429; index += 1)
      status = (await mcp(tool('get_mcp_server_version', {}), spender.token)).status;
    expect(status).toBe(429);
    const broken = await fetch(`${service.url}/api/v4/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${spender.token}`, 'content-type': 'application/json' },
      body: '{"jsonrpc":',
    });
    expect(broken.status).toBe(429);
  });

  it('POST /api/graphql: a subscription is refused with where to subscribe, not an internal error', async () => {
    const response = await fetch(`${service.url}/api/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({
        query: `subscription { aiCompletionResponse(userId: "gid://gitlab/User/${user.id}", aiAction: CHAT) { requestId } }`,
      }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
    expect(body.errors[0]).toMatchObject({
      message: expect.stringMatching(/^Subscriptions are served over WebSockets/),
      extensions: { code: 'BAD_REQUEST' },
    });
  });

  it('ActionCable: variables that are not JSON are refused naming variables', async () => {
    const result = await overCable(service.url, { query: '{ currentUser { id } }', rawVariables: '{not json', token: user.token });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'variables' });
  });

  it('webhook and projectCodeIndexCreate: a ref with a lone surrogate is refused, no index row', async () => {
    const before = await counts();
    const hook = await fetch(`${service.url}/api/v4/webhooks/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Gitlab-Event': 'Push Hook', 'X-Gitlab-Token': SECRET },
      body: JSON.stringify({
        object_kind: 'push',
        ref: 'refs/heads/feature\ud800',
        before: '0'.repeat(40),
        after: 'a'.repeat(40),
        project: { path_with_namespace: projectPath },
      }),
    });
    const gql = await overHttp(service.url, {
      query: `mutation($p: ID!, $r: String) { projectCodeIndexCreate(input: { projectPath: $p, ref: $r }) { jobId errors } }`,
      variables: { p: projectPath, r: 'other\udfff' },
      token: user.token,
    });
    expect({ hook: hook.status, gql: gql.errors?.[0]?.extensions?.code, indexes: (await counts()).indexes }).toEqual({
      hook: 400,
      gql: 'BAD_USER_INPUT',
      indexes: before.indexes,
    });
  });

  // Last: it spends the address's anonymous budget, which every anonymous request after it would find empty.
  it("a wrong token spends its address's anonymous budget, and once it is spent every transport answers 429", async () => {
    const wrong = (index: number) => ({ authorization: `Bearer glpat-wrongwrongwrong${String(index).padStart(4, '0')}` });
    const statuses: number[] = [];
    for (let index = 0; index < 40 && statuses.at(-1) !== 429; index += 1) {
      const response = await fetch(`${service.url}/api/v4/user`, { headers: wrong(index) });
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    // RATE_LIMIT_PER_MINUTE=30 (a wrong Authorization above spent one): 401s until the budget is spent, then 429.
    expect(statuses.length).toBeGreaterThan(25);
    expect(new Set(statuses.slice(0, -1))).toEqual(new Set([401]));
    expect(statuses.at(-1)).toBe(429);
    // It is the address's anonymous budget: a request without a token is refused too.
    expect((await fetch(`${service.url}/api/v4/version`)).status).toBe(429);
    const after: Record<string, number> = {};
    const json = { 'content-type': 'application/json' };
    for (const [name, path, init] of [
      ['rest', '/api/v4/user', {}],
      ['graphql', '/api/graphql', { method: 'POST', body: '{"query":"{ currentUser { id } }"}', headers: json }],
      ['mcp', '/api/v4/mcp', { method: 'POST', body: '{}', headers: { ...json, accept: 'application/json, text/event-stream' } }],
      ['oauth', '/oauth/token/info', {}],
    ] as Array<[string, string, { method?: string; body?: string; headers?: Record<string, string> }]>) {
      const response = await fetch(`${service.url}${path}`, { ...init, headers: { ...init.headers, ...wrong(99) } });
      after[name] = response.status;
      await response.arrayBuffer();
    }
    expect(after).toEqual({ rest: 429, graphql: 429, mcp: 429, oauth: 429 });
    // graphql-ws closes with 1013 (try again later); ActionCable, which has no such answer, stays unauthorized.
    const closed = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${service.url.replace(/^http/, 'ws')}/api/graphql`, 'graphql-transport-ws');
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: wrong(98) })));
      socket.on('close', (code) => resolve(code));
    });
    expect(closed).toBe(1013);
    const cable = await openRawCable(`${service.url.replace(/^http/, 'ws')}/-/cable`, { token: 'glpat-wrongwrongwrong9999' });
    expect(await cable.take({ timeoutMs: 3000 })).toMatchObject({ type: 'disconnect', reason: 'unauthorized' });
    await cable.close();
  });
});
