import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { subscribe, wsClient, type Collector } from '../helpers/chat-client';
import { groupWithSeat, unique, userWithToken } from '../helpers/fixtures';
import { createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startStubRerankerServer, type StubRerankerServer } from '../helpers/stub-reranker-server';
import { startTestService, type TestService } from '../helpers/test-service';

const CHAT = `mutation chat($question: String!, $clientSubscriptionId: String, $platformOrigin: String!, $additionalContext:
[AiAdditionalContextInput!]) {
  aiAction(input: { chat: { content: $question, additionalContext: $additionalContext, skipGatekeeper: true }, clientSubscriptionId:
  $clientSubscriptionId, platformOrigin: $platformOrigin }) { requestId errors }
}`;

// The implementation says it in other words than the question; the README and the changelog say it in its own.
const FILES: Record<string, string> = {
  'src/pool.ts': `export class Pool {
  private idle: Connection[] = [];
  /** Hands out an idle connection, pinging it first; a dead one is dropped and another tried. */
  async acquireConnection(): Promise<Connection> {
    const connection = this.idle.pop();
    if (!connection) return this.connect();
    try { await connection.ping(); return connection; } catch { connection.destroy(); return this.acquireConnection(); }
  }
}
`,
  'README.md': `# pool\n\nThe pool will ping an idle connection before reuse, so a closed connection is never handed out.\n`,
  'CHANGELOG.md': `## 2.0.0\n\n- Pool: ping an idle connection before reuse (#12).\n`,
};
const QUESTION = 'How does the pool ping an idle connection before reuse?';

// Chat's Semantic Search Tool, run by the worker, reranks what it gives the model as GraphQL and REST do.
describe('repository context in chat with a reranker', () => {
  let llm: StubLlmServer;
  let reranker: StubRerankerServer;
  let service: TestService;
  let repo: GitRepo;
  let client: ReturnType<typeof wsClient>;
  let stream: Collector;

  beforeAll(async () => {
    llm = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
    reranker = await startStubRerankerServer();
    service = await startTestService({
      role: 'all',
      env: {
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: llm.url,
        LLM_MODEL: 'stub',
        INDEX_DEBOUNCE_MS: '0',
        RERANK_PROVIDER: 'tei',
        RERANK_URL: reranker.url,
        RERANK_WEIGHT: '1',
      },
    });
    repo = createGitRepo(FILES);
  });
  afterAll(async () => {
    stream?.stop();
    await client?.dispose();
    await service.close();
    await llm.close();
    await reranker.close();
    repo.destroy();
  });

  it("gives the model the files in the reranker's order, and cites them so", async () => {
    const user = await userWithToken(service.prisma);
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    const { project } = await createProject(service.prisma, { fullPath: `${group}/${unique('pool')}`, repository: repo.path });
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
    client = wsClient(service.url, user.token);
    const clientSubscriptionId = crypto.randomUUID();
    stream = await subscribe(client, {
      userId: `gid://gitlab/User/${user.id}`,
      clientSubscriptionId,
      aiAction: 'CHAT',
      htmlResponse: false,
    });
    const { body } = await service.graphql<{ aiAction: { requestId: string } }>(CHAT, {
      token: user.token,
      variables: {
        question: QUESTION,
        clientSubscriptionId,
        platformOrigin: 'vs_code_extension',
        additionalContext: [{ category: 'REPOSITORY', id: project.fullPath, content: '', metadata: {} }],
      },
    });
    expect(body.errors).toBeUndefined();
    const messages = await stream.untilFinal(body.data!.aiAction.requestId, 40_000);
    const final = messages.find((message) => message.chunkId === null && message.role === 'ASSISTANT')!;

    expect(reranker.requests).toHaveLength(1);
    const [request] = reranker.requests;
    expect(request).toMatchObject({ format: 'tei', body: { query: QUESTION } });
    const texts = request.body.texts!;
    const rerankedOrder = texts
      .map((text, index) => ({ path: text.split('\n')[0], score: request.scores[index], index }))
      .sort((a, b) => b.score - a.score || a.index - b.index)
      .map((entry) => entry.path);
    // The search put the implementation first; the reranker, counting the question's words, did not.
    expect(texts[0].startsWith('src/pool.ts\n')).toBe(true);
    expect(rerankedOrder[0]).not.toBe('src/pool.ts');
    const cited = [...new Set((final.extras!.sources as Array<{ path: string }>).map((source) => source.path))];
    expect(cited).toEqual(rerankedOrder);
    // The model read them in that order too.
    const prompt = String(llm.requests.at(-1)!.body.messages!.at(-1)!.content);
    const positions = rerankedOrder.map((path) => prompt.indexOf(`<code path="${path}"`));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });
});
