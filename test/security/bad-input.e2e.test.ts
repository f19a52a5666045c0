import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { readJson } from '../helpers/http';
import { startTestService, type TestService } from '../helpers/test-service';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { deepJson, overCable, overGraphqlWs, overHttp, type Operation, type TransportResult } from './transports';

const CHAT = `mutation chat($question: String!, $platformOrigin: String!, $conversationType: AiConversationsThreadsConversationType,
$clientSubscriptionId: String, $additionalContext: [AiAdditionalContextInput!]) {
  aiAction(input: { chat: { content: $question, additionalContext: $additionalContext, skipGatekeeper: true }, platformOrigin:
  $platformOrigin, conversationType: $conversationType, clientSubscriptionId: $clientSubscriptionId }) { requestId threadId errors }
}`;
const MESSAGES = `query($roles: [AiMessageRole!], $first: Int) { aiMessages(roles: $roles, first: $first) { nodes { requestId } } }`;
const PROJECT = `query($path: ID!) { project(fullPath: $path) { id } }`;
const RESPONSES = `subscription($userId: UserID) { aiCompletionResponse(userId: $userId, aiAction: CHAT) { requestId } }`;

// Threat: bad input reaching the database or crashing a request (500s, half-written threads, stack
// overflows). Every bad input is BAD_USER_INPUT (400 over HTTP) naming the variable or field, on
// every transport, and nothing is written.
describe('bad input: a clear error naming the input, nothing written', () => {
  let service: TestService;
  let user: UserWithToken;
  let aiOnly: UserWithToken;
  let projectPath: string;

  const transports: Array<[string, (operation: Operation) => Promise<TransportResult>]> = [
    ['POST /api/graphql', (operation) => overHttp(service.url, operation)],
    ['graphql-ws', (operation) => overGraphqlWs(service.url, operation)],
    ['ActionCable', (operation) => overCable(service.url, operation)],
  ];
  const counts = async () => ({
    messages: await service.prisma.aiMessage.count({ where: { userId: user.id } }),
    threads: await service.prisma.aiConversationThread.count({ where: { userId: user.id } }),
  });

  beforeAll(async () => {
    service = await startTestService();
    user = await userWithToken(service.prisma);
    aiOnly = await userWithToken(service.prisma, { scopes: ['ai_features'] });
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    projectPath = (await createProject(service.prisma, { fullPath: `${group}/${unique('p')}` })).project.fullPath;
    await addMember(service.prisma, { fullPath: projectPath, username: aiOnly.username, accessLevel: 'maintainer' });
    await addMember(service.prisma, { fullPath: projectPath, username: user.username, accessLevel: 'reporter' });
  });
  afterAll(() => service.close());

  describe('token scopes are checked on what runs (case 1, POST: sockets take no mutations)', () => {
    const create = `projectCodeIndexCreate(input: { projectPath: "PATH" }) { jobId }`;
    it.each([
      ['a named fragment', (path: string) => `mutation { ...F } fragment F on Mutation { ${create.replace('PATH', path)} }`],
      ['an inline fragment', (path: string) => `mutation { ... on Mutation { ${create.replace('PATH', path)} } }`],
      [
        'a fragment nested in a fragment',
        (path: string) => `mutation { ...A } fragment A on Mutation { ...B } fragment B on Mutation { ${create.replace('PATH', path)} }`,
      ],
      ['the plain form', (path: string) => `mutation { ${create.replace('PATH', path)} }`],
    ])('an ai_features token may not run a non-AI mutation through %s', async (_name, document) => {
      const result = await overHttp(service.url, { query: document(projectPath), token: aiOnly.token });
      expect(result.status).toBe(403);
      expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(await service.prisma.codeIndex.count()).toBe(0);
    });

    it('an ai_features token still runs AI mutations through a fragment', async () => {
      const result = await overHttp(service.url, {
        query:
          `mutation { ...F } fragment F on Mutation { aiAction(input: { chat: { content: "/clear" }, platformOrigin: "x" }) { ` +
          `errors } }`,
        token: aiOnly.token,
      });
      expect(result.errors?.[0]?.message ?? '').not.toContain('Insufficient token scope');
    });
  });

  describe.each(transports)('bad variables over %s (case 8)', (_name, send) => {
    it.each([
      ['a wrong enum value', MESSAGES, { roles: ['NOPE'] }, 'roles'],
      ['a wrong type', MESSAGES, { first: 'ten' }, 'first'],
      ['a missing required variable', PROJECT, {}, 'path'],
      ['a wrong type for an ID', PROJECT, { path: { nested: true } }, 'path'],
    ])('%s is BAD_USER_INPUT naming the variable', async (_case, query, variables, name) => {
      const result = await send({ query, variables, token: user.token });
      if (result.status !== undefined) expect(result.status).toBe(400);
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: name });
      expect(result.errors?.[0]?.message).toContain(`$${name}`);
    });

    it('a malformed global id is BAD_USER_INPUT naming the variable', async () => {
      const result = await send({ query: RESPONSES, variables: { userId: 'gid://gitlab/Project/1x!' }, token: user.token });
      if (result.status !== undefined) expect(result.status).toBe(400);
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'userId' });
    });

    it('a NUL byte is BAD_USER_INPUT naming the variable; written inline, naming the argument', async () => {
      const inVariable = await send({ query: PROJECT, variables: { path: `${projectPath}\u0000` }, token: user.token });
      if (inVariable.status !== undefined) expect(inVariable.status).toBe(400);
      expect(inVariable.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'path' });
      const inline = await send({ query: `query { project(fullPath: "a\\u0000b") { id } }`, token: user.token });
      expect(inline.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'fullPath' });
    });

    it('variables nested deeper than MAX_JSON_DEPTH are refused without a stack overflow', async () => {
      const result = await send({ query: PROJECT, rawVariables: `{"path":${deepJson(5000)}}`, token: user.token });
      if (result.status !== undefined) expect(result.status).toBe(400);
      expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(result.errors?.[0]?.message).toContain('nested deeper than');
    });
  });

  describe('chat input (cases 9, 11, 12)', () => {
    const chat = (variables: Record<string, unknown>) =>
      overHttp(service.url, { query: CHAT, variables: { platformOrigin: 'language_server', ...variables }, token: user.token });

    it('a NUL byte with conversationType set leaves no thread and no message behind', async () => {
      const before = await counts();
      const result = await chat({ question: 'hello\u0000there', conversationType: 'DUO_CHAT' });
      expect(result.status).toBe(400);
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'question' });
      expect(await counts()).toEqual(before);
      // Inside an input object, the path names the field.
      const nested = await chat({
        question: 'hello',
        additionalContext: [{ id: 'a', category: 'SNIPPET', content: 'x\u0000', metadata: {} }],
      });
      expect(nested.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'additionalContext.0.content' });
      expect(await counts()).toEqual(before);
    });

    it('a refused chat with conversationType leaves no empty thread (the thread is written with the message)', async () => {
      const before = await counts();
      const result = await chat({ question: 'hello', conversationType: 'DUO_CHAT', platformOrigin: 'x'.repeat(300) });
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'platformOrigin' });
      expect(await counts()).toEqual(before);
      const accepted = await chat({ question: 'hello there, what is this?', conversationType: 'DUO_CHAT' });
      expect(accepted.errors).toBeUndefined();
      expect(await counts()).toEqual({ messages: before.messages + 1, threads: before.threads + 1 });
    });

    it.each([
      ['clientSubscriptionId', { clientSubscriptionId: 'c'.repeat(1024 * 1024) }, 'clientSubscriptionId'],
      ['platformOrigin', { platformOrigin: 'p'.repeat(1024 * 1024) }, 'platformOrigin'],
      [
        'context metadata',
        { additionalContext: [{ id: 'a', category: 'SNIPPET', content: 'x', metadata: { blob: 'm'.repeat(3 * 1024 * 1024) } }] },
        'additionalContext.metadata',
      ],
    ])('a 1 MB+ %s is refused and not stored', async (_name, variables, field) => {
      const before = await counts();
      const result = await chat({ question: 'explain this', ...variables });
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
      expect(await counts()).toEqual(before);
    });

    it('context metadata nested 5,000 levels deep is refused, not a stack overflow', async () => {
      const result = await overHttp(service.url, {
        query: CHAT,
        rawVariables:
          `{"question":"explain ` +
          `this","platformOrigin":"x","additionalContext":[{"id":"a","category":"SNIPPET","content":"x","metadata":${deepJson(5000)}}]}`,
        token: user.token,
      });
      expect(result.status).toBe(400);
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
      expect(String(result.errors?.[0]?.extensions?.field)).toMatch(/^additionalContext\.0\.metadata/);
    });
  });

  describe('REST input (cases 10, 11, 13)', () => {
    const rest = (path: string, init: RequestInit = {}) =>
      fetch(`${service.url}/api/v4${path}`, {
        ...init,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json', ...init.headers },
      });

    it.each(['%25', '1%00', '%2525', 'demo%00group%2Fx'])('the project id %s is a 404, not a 500', async (id) => {
      const response = await rest(`/projects/${id}/search/semantic?q=vat+amount`);
      expect(response.status).toBe(404);
    });

    it('a project id is decoded once: group%252Fproject is not group/project', async () => {
      const encodedTwice = encodeURIComponent(encodeURIComponent(projectPath));
      const once = await rest(`/projects/${encodeURIComponent(projectPath)}/search/semantic?q=vat+amount`);
      const twice = await rest(`/projects/${encodedTwice}/search/semantic?q=vat+amount`);
      expect(once.status).not.toBe(404);
      expect(twice.status).toBe(404);
    });

    it('a JSON body nested too deep or holding a NUL is 400 naming the field', async () => {
      const nested = await rest('/code_suggestions/enabled', {
        method: 'POST',
        body: `{"project_path":${JSON.stringify(projectPath)},"extra":${deepJson(5000)}}`,
      });
      expect(nested.status).toBe(400);
      expect((await readJson(nested)).field).toMatch(/^extra/);
      const nul = await rest('/code_suggestions/enabled', {
        method: 'POST',
        body: JSON.stringify({ project_path: `${projectPath}\u0000` }),
      });
      expect(nul.status).toBe(400);
      expect(await readJson(nul)).toMatchObject({ field: 'project_path' });
    });

    it('a NUL byte in a query parameter is 400 naming it', async () => {
      const response = await rest(`/projects/${encodeURIComponent(projectPath)}/search/semantic?q=vat+amount&directory_path=src%00`);
      expect(response.status).toBe(400);
      expect(await readJson(response)).toMatchObject({ field: 'directory_path' });
    });

    it.each(['???', 'the of and', '  ...!!! ', 'how does it work?'])(
      'the query %j has nothing to search for: 400 naming q, and BAD_USER_INPUT naming query',
      async (query) => {
        const response = await rest(`/projects/${encodeURIComponent(projectPath)}/search/semantic?q=${encodeURIComponent(query)}`);
        expect(response.status).toBe(400);
        expect(await readJson(response)).toMatchObject({ field: 'q', error: expect.stringContaining('nothing to search for') });
        const graphql = await overHttp(service.url, {
          query: `query($q: String!) { codebaseSearch(projectPath: "${projectPath}", query: $q) { path } }`,
          variables: { q: query },
          token: user.token,
        });
        expect(graphql.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'query' });
      },
    );
  });
});
