import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Project } from '../../src/db/prisma';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { revokeToken } from '../../src/users/users.service';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { BILLING_FILES, createGitRepo, type GitRepo } from '../helpers/git-repo';
import { readJson } from '../helpers/http';
import { startTestService, type TestService } from '../helpers/test-service';

type ToolResult = { content: Array<{ type: string; text: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };

// GitLab's MCP server through the official SDK client over Streamable HTTP, against the real service
// with an index built by the real worker.
describe('MCP server at /api/v4/mcp', () => {
  let service: TestService;
  let repo: GitRepo;
  let project: Project;
  let user: UserWithToken;
  let groupPath: string;
  const clients: Client[] = [];

  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'duo-slice-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/api/v4/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;

  async function waitSearchable(client: Client) {
    const started = Date.now();
    for (;;) {
      const status = await call(client, 'get_code_index_status', { project_id: project.fullPath });
      if (status.structuredContent?.searchable === true) return status;
      if (Date.now() - started > 30_000) throw new Error(`index never ready: ${JSON.stringify(status)}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }

  beforeAll(async () => {
    service = await startTestService({ role: 'all', env: { INDEX_DEBOUNCE_MS: '0', EXTERNAL_URL: 'https://gitlab.example.com/' } });
    repo = createGitRepo(BILLING_FILES);
    user = await userWithToken(service.prisma, { scopes: ['mcp'] });
    groupPath = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    project = (await createProject(service.prisma, { fullPath: `${groupPath}/${unique('code')}`, repository: repo.path })).project;
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await service.close();
    repo.destroy();
  });

  it('lists GitLab tools with their input schemas to a client with an mcp-scope token', async () => {
    const client = await connect(user.token);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'get_code_index_status',
      'get_mcp_server_version',
      'semantic_code_search',
      'semantic_search',
    ]);
    // GitLab's aggregated tool: scope "code", q, project_id, and the code search's other arguments.
    const aggregated = tools.find((tool) => tool.name === 'semantic_search')!;
    expect(aggregated.inputSchema.required).toEqual(expect.arrayContaining(['scope', 'q', 'project_id']));
    expect(aggregated.inputSchema.properties).toMatchObject({
      scope: { type: 'string', enum: ['code'] },
      q: { type: 'string', maxLength: 1000 },
      directory_path: { type: 'string', maxLength: 100 },
      knn: { type: 'integer', minimum: 1, maximum: 100, default: 64 },
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    });
    const search = tools.find((tool) => tool.name === 'semantic_code_search')!;
    expect(search.inputSchema.required).toEqual(expect.arrayContaining(['semantic_query', 'project_id']));
    expect(search.inputSchema.properties).toMatchObject({
      semantic_query: { type: 'string', maxLength: 1000 },
      directory_path: { type: 'string', maxLength: 100 },
      knn: { type: 'integer', minimum: 1, maximum: 100, default: 64 },
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    });
    expect(search.annotations?.readOnlyHint).toBe(true);
    const version = await call(client, 'get_mcp_server_version', {});
    expect(version.content[0].text).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('starts indexing on the first search, then gets code from semantic_code_search by path and by id', async () => {
    const client = await connect(user.token);
    const before = await call(client, 'get_code_index_status', { project_id: project.fullPath });
    expect(before.isError).toBeFalsy();
    expect(before.structuredContent).toMatchObject({ state: 'not_indexed', searchable: false, ref: 'main' });

    const first = await call(client, 'semantic_code_search', { project_id: project.fullPath, semantic_query: 'compute vat amount' });
    expect(first.isError).toBe(true);
    expect(first.content[0].text).toContain(`Project '${project.fullPath}' has no embeddings`);
    expect(first.content[0].text).toContain('indexing has started');

    const ready = await waitSearchable(client);
    expect(ready.structuredContent).toMatchObject({ state: 'ready', commit_sha: repo.head() });

    const found = await call(client, 'semantic_code_search', {
      project_id: project.fullPath,
      semantic_query: 'how is the vat amount computed for a line',
      limit: 3,
    });
    expect(found.isError).toBeFalsy();
    expect(found.content[0].text).toMatch(/^Confidence: (HIGH|MEDIUM|LOW)\n\n1\. src\/billing\/tax\.ts \(score: /);
    expect(found.content[0].text).toContain('computeVatAmount');
    const items = found.structuredContent!.items as Array<Record<string, unknown>>;
    expect(items.length).toBeLessThanOrEqual(3);
    expect(items[0]).toMatchObject({
      path: 'src/billing/tax.ts',
      project_id: project.id,
      language: 'typescript',
      blob_id: expect.stringMatching(/^[0-9a-f]{40}$/),
      file_url: `https://gitlab.example.com/${project.fullPath}/-/blob/main/src/billing/tax.ts`,
      snippet_ranges: [expect.objectContaining({ start_line: 1, content: expect.stringContaining('computeVatAmount') })],
    });
    expect(found.structuredContent!.metadata).toMatchObject({ count: items.length, has_more: false, commit_sha: repo.head() });

    const byId = await call(client, 'semantic_code_search', {
      project_id: project.id,
      semantic_query: 'invoice mailer',
      directory_path: 'lib/',
    });
    expect((byId.structuredContent!.items as Array<{ path: string }>).map((item) => item.path)).toEqual(['lib/invoice.rb']);
  });

  it('gets the same code from semantic_search with scope "code" as from its alias semantic_code_search', async () => {
    const client = await connect(user.token);
    await waitSearchable(client);
    const question = 'how is the vat amount computed for a line';
    const aggregated = await call(client, 'semantic_search', { scope: 'code', q: question, project_id: project.fullPath, limit: 3 });
    expect(aggregated.isError).toBeFalsy();
    expect(aggregated.content[0].text).toMatch(/^Confidence: (HIGH|MEDIUM|LOW)\n\n1\. src\/billing\/tax\.ts \(score: /);
    const alias = await call(client, 'semantic_code_search', { semantic_query: question, project_id: project.fullPath, limit: 3 });
    expect(aggregated.content).toEqual(alias.content);
    expect(aggregated.structuredContent).toEqual(alias.structuredContent);

    const scoped = await call(client, 'semantic_search', {
      scope: 'code',
      q: 'invoice mailer',
      project_id: String(project.id),
      directory_path: 'lib/',
      knn: 10,
    });
    expect((scoped.structuredContent!.items as Array<{ path: string }>).map((item) => item.path)).toEqual(['lib/invoice.rb']);

    // GitLab's schema: scope is required and only "code" exists; the code tool's own argument name is not taken.
    for (const args of [
      { q: question, project_id: project.fullPath },
      { scope: 'issues', q: question, project_id: project.fullPath },
      { scope: 'code', semantic_query: question, project_id: project.fullPath },
    ]) {
      const refused = await call(client, 'semantic_search', args);
      expect(refused.isError).toBe(true);
      expect(refused.content[0].text).toMatch(/Input validation error|Invalid arguments/);
    }
    const blank = await call(client, 'semantic_search', { scope: 'code', q: '   ', project_id: project.fullPath });
    expect(blank.isError).toBe(true);
    expect(blank.content[0].text).toContain('q');
  });

  it('answers a hidden project exactly like a missing one', async () => {
    const stranger = await userWithToken(service.prisma, { scopes: ['mcp'] });
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: stranger.username });
    const client = await connect(stranger.token);
    for (const [tool, args] of [
      ['semantic_code_search', { semantic_query: 'invoice' }],
      ['get_code_index_status', {}],
    ] as const) {
      const hidden = await call(client, tool, { project_id: project.fullPath, ...args });
      const missing = await call(client, tool, { project_id: `${groupPath}/does-not-exist`, ...args });
      const missingId = await call(client, tool, { project_id: 987654321, ...args });
      expect(hidden.isError).toBe(true);
      expect(hidden.content).toEqual(missing.content);
      expect(hidden.content).toEqual(missingId.content);
      expect(hidden.content[0].text).toContain("does not exist or you don't have permission");
      expect(JSON.stringify(hidden)).not.toContain(project.fullPath);
    }
  });

  it.each([
    ['knn above 100', { knn: 1000 }, /knn/],
    ['a limit of 0', { limit: 0 }, /limit/],
    ['a query over 1,000 characters', { semantic_query: 'x'.repeat(1001) }, /semantic_query/],
    ['an absolute directory', { directory_path: '/etc' }, /directory_path must not start with \/ or contain \.\. segments/],
    ['a directory that climbs out', { directory_path: 'src/../..' }, /directory_path must not start/],
    ['an unknown argument', { branch: 'main' }, /branch|unrecognized/i],
  ])('refuses %s as a tool error', async (_name, override, message) => {
    const client = await connect(user.token);
    const result = await call(client, 'semantic_code_search', { project_id: project.fullPath, semantic_query: 'invoice', ...override });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(message);
  });

  it('refuses a missing argument as a tool error', async () => {
    const client = await connect(user.token);
    const result = await call(client, 'semantic_code_search', { project_id: project.fullPath });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/semantic_query/);
  });

  it('needs a valid token: 401 without one or with a wrong or revoked one; 403 for a token without api, read_api or mcp', async () => {
    const revoked = await userWithToken(service.prisma, { scopes: ['mcp'] });
    await revokeToken(service.prisma, { token: revoked.token });
    const initialize = (headers: Record<string, string>) =>
      fetch(`${service.url}/api/v4/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
        }),
      });
    const anonymous = await initialize({});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await initialize({ authorization: 'Bearer glpat-wrongwrongwrongwrong' })).status).toBe(401);
    expect((await initialize({ authorization: `Bearer ${revoked.token}` })).status).toBe(401);
    const aiOnly = await userWithToken(service.prisma, { scopes: ['ai_features'] });
    const refused = await initialize({ authorization: `Bearer ${aiOnly.token}` });
    expect(refused.status).toBe(403);
    expect(await readJson(refused)).toMatchObject({ error: 'insufficient_scope' });
    const readApi = await userWithToken(service.prisma, { scopes: ['read_api'] });
    expect((await initialize({ authorization: `Bearer ${readApi.token}` })).status).toBe(200);
    await expect(connect('glpat-wrongwrongwrongwrong')).rejects.toThrow();
  });

  it('keeps an mcp-scope token out of REST and GraphQL, but for semantic search (GitLab: allow_mcp_access_read)', async () => {
    const rest = await fetch(`${service.url}/api/v4/user`, { headers: { authorization: `Bearer ${user.token}` } });
    expect(rest.status).toBe(403);
    const search = await fetch(`${service.url}/api/v4/projects/${encodeURIComponent(project.fullPath)}/search/semantic?q=invoice`, {
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(search.status).toBe(200);
    expect((await readJson(search)).results.length).toBeGreaterThan(0);
    const graphql = await service.graphql('{ currentUser { id } }', { token: user.token });
    expect(graphql.status).toBe(403);
    expect(graphql.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it("get_code_index_status shows an index's last error without server paths, as GraphQL does", async () => {
    await service.prisma.codeIndex.upsert({
      where: { projectId_ref: { projectId: project.id, ref: 'broken' } },
      create: {
        projectId: project.id,
        ref: 'broken',
        state: 'failed',
        lastError: 'git rev-parse failed in /srv/data/repositories/7.git: bad',
      },
      update: { state: 'failed', lastError: 'git rev-parse failed in /srv/data/repositories/7.git: bad' },
    });
    const client = await connect(user.token);
    const status = await call(client, 'get_code_index_status', { project_id: project.fullPath, ref: 'broken' });
    expect(status.structuredContent).toMatchObject({ last_error: 'git rev-parse failed in <path>: bad' });
    expect(JSON.stringify(status)).not.toContain('/srv/data');
  });

  it('offers no server-to-client stream (GET) in stateless mode', async () => {
    const response = await fetch(`${service.url}/api/v4/mcp`, {
      headers: { authorization: `Bearer ${user.token}`, accept: 'text/event-stream' },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('answers a body that is not JSON, or too large, in JSON-RPC terms', async () => {
    const post = (body: string) =>
      fetch(`${service.url}/api/v4/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${user.token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body,
      });
    const broken = await post('{"jsonrpc":"2.0","id":1,');
    expect(broken.status).toBe(400);
    expect(await readJson(broken)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error: the body is not JSON' },
      id: null,
    });
    const large = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(5 * 1024 * 1024) } }));
    expect(large.status).toBe(413);
    expect(await readJson(large)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 }, id: null });
  });
});
