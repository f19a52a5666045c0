import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Project } from '../../src/db/prisma';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { LSP_CHAT_MUTATION, subscribe, wsClient, type Collector } from '../helpers/chat-client';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { createGitRepo, type GitRepo } from '../helpers/git-repo';
import { readJson } from '../helpers/http';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

/** Asks chat about a project's repository as the language server does, and waits for the final answer. */
async function askAboutRepository(options: {
  service: TestService;
  token: string;
  projectPath: string;
  question: string;
  stream: Collector;
  clientSubscriptionId: string;
}) {
  const { body } = await options.service.graphql<{ aiAction: { requestId: string } }>(LSP_CHAT_MUTATION, {
    token: options.token,
    variables: {
      question: options.question,
      clientSubscriptionId: options.clientSubscriptionId,
      platformOrigin: 'vs_code_extension',
      additionalContext: [{ id: options.projectPath, category: 'REPOSITORY', content: '', metadata: {} }],
    },
  });
  expect(body.errors).toBeUndefined();
  return (await options.stream.untilFinal(body.data!.aiAction.requestId, 20_000)).find((message) => message.chunkId === null)!;
}

// A module whose import block names every word of the question (as duo-slice's own push webhook
// service does): the block is what full text matches best, and it comes first by line.
const IMPORTS = [
  "import { timingSafeEqual } from 'node:crypto';",
  "import type { Redis } from 'ioredis';",
  "import { digestToken } from '../auth/tokens';",
  "import { webhookSecretDigest, webhookTokenHeader } from '../auth/webhook-secrets';",
  "import type { PrismaClient } from '../db/prisma';",
  "import { unauthenticated } from '../errors';",
  "import type { Queues } from '../queues';",
  "import { requestIndexRun } from '../indexing/index-runs';",
  "import { validateRef } from '../indexing/refs';",
  "import type { PushEvent, PushWebhookPayload } from './push-event';",
  "import { pushWebhookEventKey } from '../redis-keys';",
  "import { checkedPushToken, pushTokenMetrics } from './push-token-metrics';",
  "import { logPushWebhook } from './push-webhook-log';",
  "import { webhookRateLimit } from './webhook-rate-limit';",
  "import { pushWebhookSettings } from './push-webhook-settings';",
  "import { tokenCheckFailures } from './token-check-failures';",
];
const PUSH_WEBHOOK = `${IMPORTS.join('\n')}

/** How long a webhook event id is remembered. */
const EVENT_TTL_SECONDS = 24 * 60 * 60;

function sameDigest(expected: string | null, token: string | null): boolean {
  const actual = Buffer.from(digestToken(token ?? ''), 'hex');
  const wanted = Buffer.from(expected ?? digestToken(''), 'hex');
  return timingSafeEqual(actual, wanted) && expected !== null && token !== null && token !== '';
}

/** Takes a push webhook: checks the project's webhook token against its secret, then queues the index run. */
export async function handlePushWebhook(prisma: PrismaClient, event: PushEvent, token: string | null) {
  const project = await prisma.project.findUnique({ where: { fullPath: event.projectPath } });
  if (!project || !sameDigest(project.webhookSecretDigest, token)) throw unauthenticated();
  validateRef(event.branch);
  return requestIndexRun({ projectId: project.id, ref: event.branch, ttl: EVENT_TTL_SECONDS });
}
`;

// Usage text whose first function names the question's words most; the tag the question quotes is in the second.
const USAGE = `/** Writes the usage text: the binary name, then its options, then the positional arguments. */
export function writeUsage(command: Command, out: string[]): void {
  const options = command.options.filter((option) => !option.hidden);
  out.push(\`Usage: \${command.name}\`);
  for (const option of options) out.push(\`  \${option.flag}  \${option.help}\`);
  for (const positional of command.positionals) out.push(\`  <\${positional.name}>\`);
}

/** Whether any option that is not hidden is left, and only then the tag. */
export function optionsTag(command: Command): string {
  const shown = command.options.filter((option) => !option.hidden && option.flag !== '--help');
  return shown.length ? ' [OPTIONS]' : '';
}
`;
const QUOTED_QUESTION = 'When does the usage show "[OPTIONS]"?';

const FILES: Record<string, string> = {
  'src/cli/usage.ts': USAGE,
  'src/webhooks/push-webhook.ts': PUSH_WEBHOOK,
  'src/webhooks/README.md': '# Webhooks\n\nGitLab sends push events here.\n',
  'src/billing/tax.ts':
    'export function computeVatAmount(net: number, rate: number): number {\n  return Math.round(net * rate) / 100;\n}\n',
};

const TOKEN_QUESTION = 'where is the push webhook token checked?';
const IMPORT_QUESTION = 'which modules does the push webhook module import?';

/** Lines 1–N of the file are its import block: a snippet within them is the import block. */
const importBlockEnd = IMPORTS.length;
const isImportBlock = (content: string) =>
  content
    .split('\n')
    .filter((line) => line.trim())
    .every((line) => line.startsWith('import '));

type SnippetRange = { start_line: number; end_line: number; content: string };
type SemanticAnswer = { results: Array<{ path: string; snippet_ranges: SnippetRange[] }> };
type McpResult = { content: Array<{ type: string; text: string }>; isError?: boolean };

// Which lines of a found file come first, on every transport: the code that answers, not the file's imports.
describe('snippets that answer, through REST, MCP and GraphQL chat', () => {
  let service: TestService;
  let repo: GitRepo;
  let project: Project;
  let user: UserWithToken;
  let mcp: Client;

  beforeAll(async () => {
    service = await startTestService({ role: 'all', env: { GATEKEEPER: 'false', INDEX_DEBOUNCE_MS: '0' } });
    repo = createGitRepo(FILES);
    user = await userWithToken(service.prisma, { scopes: ['api', 'mcp'] });
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    project = (await createProject(service.prisma, { fullPath: `${group}/${unique('hooks')}`, repository: repo.path })).project;
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
    mcp = new Client({ name: 'duo-slice-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/api/v4/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${user.token}` } },
      }),
    );
    // The first search starts indexing; then wait for the index.
    await semantic(TOKEN_QUESTION);
    await waitUntil(() => service.prisma.codeIndex.findFirst({ where: { projectId: project.id } }), {
      until: (index) => index?.state === 'ready',
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the index to be ready',
    });
  });
  afterAll(async () => {
    await mcp.close();
    await service.close();
    repo.destroy();
  });

  function semantic(q: string) {
    return fetch(
      `${service.url}/api/v4/projects/${encodeURIComponent(project.fullPath)}/search/semantic?${new URLSearchParams({ q }).toString()}`,
      {
        headers: { authorization: `Bearer ${user.token}` },
      },
    );
  }

  async function mcpSnippets(question: string): Promise<Array<{ path: string; start: number; content: string }>> {
    const result = (await mcp.callTool({
      name: 'semantic_code_search',
      arguments: { project_id: project.fullPath, semantic_query: question },
    })) as McpResult;
    expect(result.isError).toBeFalsy();
    // GitLab's layout: "1. path (score: …)" then "[Lines a-b]" blocks.
    const text = result.content[0].text;
    const path = /^1\. (\S+) \(score: /m.exec(text)![1];
    const blocks = text.split(/^\[Lines (\d+)-\d+\]\n/m);
    return [{ path, start: Number(blocks[1]), content: blocks[2] }];
  }

  const chat = (question: string, stream: Collector, clientSubscriptionId: string) =>
    askAboutRepository({ service, token: user.token, projectPath: project.fullPath, question, stream, clientSubscriptionId });

  it('REST semantic search leads the found file with the function that checks the token, not its import block', async () => {
    const response = await semantic(TOKEN_QUESTION);
    expect(response.status).toBe(200);
    const body = (await readJson(response)) as SemanticAnswer;
    expect(body.results[0].path).toBe('src/webhooks/push-webhook.ts');
    const [first, ...rest] = body.results[0].snippet_ranges;
    expect(isImportBlock(first.content)).toBe(false);
    expect(first.start_line).toBeGreaterThan(importBlockEnd);
    expect(first.content).toContain('timingSafeEqual(actual, wanted)');
    // No snippet of the file is its import block: no one asked for it.
    expect(rest.filter((range) => range.start_line <= importBlockEnd)).toEqual([]);
  });

  it('MCP semantic_code_search gives the function first', async () => {
    const [first] = await mcpSnippets(TOKEN_QUESTION);
    expect(first.path).toBe('src/webhooks/push-webhook.ts');
    expect(first.start).toBeGreaterThan(importBlockEnd);
    expect(isImportBlock(first.content)).toBe(false);
    expect(first.content).toContain('sameDigest');
  });

  it('a question that quotes code gets the lines that hold it first, on REST and MCP', async () => {
    const body = (await readJson(await semantic(QUOTED_QUESTION))) as SemanticAnswer;
    const file = body.results.find((result) => result.path === 'src/cli/usage.ts')!;
    expect(file.snippet_ranges[0].content).toContain("' [OPTIONS]'");
    const [first] = await mcpSnippets(QUOTED_QUESTION);
    expect(first.path).toBe('src/cli/usage.ts');
    expect(first.content).toContain("' [OPTIONS]'");
  });

  it('a question about what the module imports gets its import block first, on REST and MCP', async () => {
    const body = (await readJson(await semantic(IMPORT_QUESTION))) as SemanticAnswer;
    const file = body.results.find((result) => result.path === 'src/webhooks/push-webhook.ts')!;
    expect(file.snippet_ranges[0].start_line).toBe(1);
    expect(isImportBlock(file.snippet_ranges[0].content.split('\n').slice(0, importBlockEnd).join('\n'))).toBe(true);
    const [first] = await mcpSnippets(IMPORT_QUESTION);
    expect(first).toMatchObject({ path: 'src/webhooks/push-webhook.ts', start: 1 });
    expect(first.content).toContain("import { timingSafeEqual } from 'node:crypto';");
  });

  it('GraphQL chat answers with the function first, in the answer and in extras.sources, and with the imports when asked', async () => {
    const client = wsClient(service.url, user.token);
    try {
      const clientSubscriptionId = crypto.randomUUID();
      const stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, aiAction: 'CHAT', clientSubscriptionId });
      const answer = await chat(TOKEN_QUESTION, stream, clientSubscriptionId);
      // No model is configured: the answer is what search found, best first.
      expect(answer.content).toMatch(/^No language model is configured, so this is what code search found/);
      const firstCode = /```typescript\n([\s\S]*?)\n```/.exec(answer.content)![1];
      expect(isImportBlock(firstCode)).toBe(false);
      expect(firstCode).toContain('sameDigest');
      const sources = answer.extras!.sources as Array<{ path: string; startLine: number; endLine: number }>;
      expect(sources[0].path).toBe('src/webhooks/push-webhook.ts');
      expect(sources[0].startLine).toBeGreaterThan(importBlockEnd);
      expect(sources.filter((source) => source.path === 'src/webhooks/push-webhook.ts' && source.startLine <= importBlockEnd)).toEqual([]);

      const imports = await chat(IMPORT_QUESTION, stream, clientSubscriptionId);
      const importSources = imports.extras!.sources as Array<{ path: string; startLine: number }>;
      expect(importSources.find((source) => source.path === 'src/webhooks/push-webhook.ts')).toMatchObject({ startLine: 1 });
      expect(imports.content).toContain("import { timingSafeEqual } from 'node:crypto';");
      stream.stop();
    } finally {
      await client.dispose();
    }
  });
});

// What the model reads: the snippets that answer, best first, and no import block no one asked for.
describe('the prompt a model gets for a question with repository context', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let repo: GitRepo;
  let user: UserWithToken;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
    service = await startTestService({
      role: 'all',
      env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub', GATEKEEPER: 'false', INDEX_DEBOUNCE_MS: '0' },
    });
    repo = createGitRepo(FILES);
    user = await userWithToken(service.prisma);
  });
  afterAll(async () => {
    await service.close();
    await stub.close();
    repo.destroy();
  });

  it('gives the function that checks the token first and leaves the import block out; an import question gets it', async () => {
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    const project = (await createProject(service.prisma, { fullPath: `${group}/${unique('hooks')}`, repository: repo.path })).project;
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
    const client = wsClient(service.url, user.token);
    try {
      const clientSubscriptionId = crypto.randomUUID();
      const stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, aiAction: 'CHAT', clientSubscriptionId });
      const ask = async (question: string) => {
        await askAboutRepository({ service, token: user.token, projectPath: project.fullPath, question, stream, clientSubscriptionId });
        const content = stub.requests.at(-1)?.body.messages?.at(-1)?.content;
        return typeof content === 'string' ? content : JSON.stringify(content);
      };
      await ask(TOKEN_QUESTION); // starts indexing
      await waitUntil(() => service.prisma.codeIndex.findFirst({ where: { projectId: project.id } }), {
        until: (index) => index?.state === 'ready',
        timeoutMs: 30_000,
        intervalMs: 100,
        what: 'the index to be ready',
      });

      const prompt = await ask(TOKEN_QUESTION);
      const blocks = [...prompt.matchAll(/<code path="([^"]+)" lines="(\d+)-(\d+)"[^>]*>\n([\s\S]*?)\n<\/code>/g)];
      expect(blocks[0][1]).toBe('src/webhooks/push-webhook.ts');
      expect(Number(blocks[0][2])).toBeGreaterThan(importBlockEnd);
      expect(blocks[0][4]).toContain('timingSafeEqual(actual, wanted)');
      expect(prompt).not.toContain("import { webhookRateLimit } from './webhook-rate-limit';");

      const imports = await ask(IMPORT_QUESTION);
      expect(imports).toContain("import { webhookRateLimit } from './webhook-rate-limit';");
      stream.stop();
    } finally {
      await client.dispose();
    }
  });
});
