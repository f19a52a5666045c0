import { indexedProject, searchedFiles } from '../helpers/indexed-project';
import { createGitRepo, type GitRepo } from '../helpers/git-repo';
import { parseScrape, valueOf } from '../helpers/prometheus';
import { startStubRerankerServer, type RecordedRerankRequest, type StubRerankerServer } from '../helpers/stub-reranker-server';
import { startTestService, type TestService } from '../helpers/test-service';

// Every file talks about pinging an idle connection before reuse; the search ranks the implementation
// first (its role), while the stand-in reranker, counting the question's words, prefers the files
// that say it in so many words: the tests, the README, the changelog.
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
  'src/pool.test.ts': `import { Pool } from './pool';
describe('Pool', () => {
  it('pings an idle connection before reuse', async () => { const pool = new Pool(); await pool.acquireConnection();
  expect(ping).toHaveBeenCalled(); });
});
`,
  'types/pool.d.ts': `export declare class Pool {
  /** Acquire an idle connection; the idle connection is pinged before reuse. */
  acquireConnection(): Promise<Connection>;
}
`,
  'README.md': `# pool\n\nThe pool will ping an idle connection before reuse, so a closed connection is never handed out.\n`,
  'CHANGELOG.md': `## 2.0.0\n\n- Pool: ping an idle connection before reuse (#12).\n`,
};
const QUESTION = 'How does the pool ping an idle connection before reuse?';
const MAX_CHARS = 150;

type Searchable = { service: TestService; token: string; projectPath: string };

/** A project of FILES for a user with a seat, indexed by the service's own worker. */
async function searchable(service: TestService, repo: GitRepo): Promise<Searchable> {
  const { token, projectPath } = await indexedProject(service, { repository: repo.path, name: 'pool' });
  return { service, token, projectPath };
}

/** The files of a GraphQL codebase search, best first. */
function graphqlFiles({ service, token, projectPath }: Searchable): Promise<string[]> {
  return searchedFiles(service, { token, projectPath, query: QUESTION, first: 50 });
}

/** The files of GitLab's REST semantic search, best first, with their scores. */
async function restFiles({ service, token, projectPath }: Searchable): Promise<Array<{ path: string; score: number }>> {
  const query = new URLSearchParams({ q: QUESTION, limit: '50' });
  const response = await fetch(`${service.url}/api/v4/projects/${encodeURIComponent(projectPath)}/search/semantic?${query.toString()}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { results: Array<{ path: string; score: number }> };
  return body.results.map(({ path, score }) => ({ path, score }));
}

/** The order the stand-in's scores give the documents it was sent (each starts with its file's path), ties in the order sent. */
function stubOrder(request: RecordedRerankRequest): string[] {
  const documents = request.body.documents ?? request.body.texts ?? [];
  return documents
    .map((document, index) => ({ path: document.split('\n')[0], score: request.scores[index], index }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .map((entry) => entry.path);
}

async function rerankCount(service: TestService, labels: Record<string, string>): Promise<number> {
  return valueOf(parseScrape(await (await fetch(`${service.url}/-/metrics`)).text()), 'duo_rerank_requests_total', labels);
}

// The reranker through the real entry points, against a stand-in speaking each wire format.
describe('code search with a reranker (RERANK_PROVIDER)', () => {
  let repo: GitRepo;
  let stub: StubRerankerServer;
  let off: Searchable;
  let cohere: Searchable;
  let tei: Searchable;
  let plainOrder: string[];

  beforeAll(async () => {
    repo = createGitRepo(FILES);
    stub = await startStubRerankerServer({ apiKey: 'rerank-key' });
    const env = { INDEX_DEBOUNCE_MS: '0' };
    const rerank = { RERANK_API_KEY: 'rerank-key', RERANK_WEIGHT: '1', RERANK_MAX_CHARS: String(MAX_CHARS), RERANK_TIMEOUT_MS: '800' };
    const [offService, cohereService, teiService] = await Promise.all([
      startTestService({ role: 'all', env }),
      startTestService({
        role: 'all',
        env: { ...env, ...rerank, RERANK_PROVIDER: 'cohere', RERANK_URL: `${stub.url}/v1`, RERANK_MODEL: 'stub-reranker' },
      }),
      startTestService({ role: 'all', env: { ...env, ...rerank, RERANK_PROVIDER: 'tei', RERANK_URL: stub.url } }),
    ]);
    [off, cohere, tei] = await Promise.all([offService, cohereService, teiService].map((service) => searchable(service, repo)));
    stub.reset();
    plainOrder = await graphqlFiles(off);
  }, 120_000);
  afterEach(() => stub.reset());
  afterAll(async () => {
    await Promise.all([off, cohere, tei].map((searchable) => searchable?.service.close()));
    await stub?.close();
    repo?.destroy();
  });

  it('is off by default: the search keeps its own order and asks no reranker', async () => {
    expect(plainOrder[0]).toBe('src/pool.ts');
    expect(plainOrder).toHaveLength(Object.keys(FILES).length);
    expect(await graphqlFiles(off)).toEqual(plainOrder);
    expect(stub.requests).toHaveLength(0);
  });

  it("GraphQL: the Cohere-format reranker's order replaces the search's (weight 1), from the files' paths and first snippets", async () => {
    const before = await rerankCount(cohere.service, { provider: 'cohere', outcome: 'ok' });
    const reranked = await graphqlFiles(cohere);
    expect(stub.requests).toHaveLength(1);
    const [request] = stub.requests;
    expect(request).toMatchObject({
      format: 'cohere',
      path: '/v1/rerank',
      headers: { authorization: 'Bearer rerank-key' },
      body: { model: 'stub-reranker', query: QUESTION, top_n: plainOrder.length },
    });
    // The candidates, in the search's order, each its path then its code, at most RERANK_MAX_CHARS.
    const documents = request.body.documents!;
    expect(documents.map((document) => document.split('\n')[0])).toEqual(plainOrder);
    expect(documents.every((document) => document.length <= MAX_CHARS)).toBe(true);
    expect(documents.some((document) => document.length === MAX_CHARS)).toBe(true);
    expect(reranked).toEqual(stubOrder(request));
    expect(reranked).not.toEqual(plainOrder);
    expect(reranked[0]).not.toBe('src/pool.ts');
    expect(await rerankCount(cohere.service, { provider: 'cohere', outcome: 'ok' })).toBe(before + 1);
    const samples = parseScrape(await (await fetch(`${cohere.service.url}/-/metrics`)).text());
    expect(valueOf(samples, 'duo_reranker_info', { provider: 'cohere', model: 'stub-reranker' })).toBe(1);
  });

  it("REST: the TEI-format reranker's order, scores still falling with it", async () => {
    const reranked = await restFiles(tei);
    expect(stub.requests).toHaveLength(1);
    const [request] = stub.requests;
    expect(request).toMatchObject({ format: 'tei', path: '/rerank', headers: { authorization: 'Bearer rerank-key' } });
    expect(request.body).toEqual({ query: QUESTION, texts: expect.any(Array), truncate: true });
    expect(reranked.map((file) => file.path)).toEqual(stubOrder(request));
    expect(reranked.map((file) => file.path)).not.toEqual(plainOrder);
    const scores = reranked.map((file) => file.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(scores[0]).toBe(1);
  });

  it.each([
    [
      'HTTP 503 (retried once, then given up)',
      [
        { kind: 'status', status: 503 },
        { kind: 'status', status: 503 },
      ],
      'http',
      2,
    ],
    ['HTTP 401', [{ kind: 'status', status: 401 }], 'http', 1],
    ['no answer within RERANK_TIMEOUT_MS', [{ kind: 'hang' }], 'timeout', 1],
    ['a malformed answer', [{ kind: 'body', body: { results: [{ index: 99, relevance_score: 1 }] } }], 'stream', 1],
  ] as const)('falls back to the search order on %s, and counts it', async (_what, behaviours, outcome, requests) => {
    const before = await rerankCount(cohere.service, { provider: 'cohere', outcome });
    stub.script(...behaviours);
    const started = Date.now();
    expect(await graphqlFiles(cohere)).toEqual(plainOrder);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(stub.requests).toHaveLength(requests);
    expect(await rerankCount(cohere.service, { provider: 'cohere', outcome })).toBe(before + 1);
    // Once the reranker answers again, its order is back.
    stub.reset();
    expect(await graphqlFiles(cohere)).toEqual(stubOrder(lastRequest()));
  });

  function lastRequest(): RecordedRerankRequest {
    expect(stub.requests.length).toBeGreaterThan(0);
    return stub.requests[stub.requests.length - 1];
  }
});

// A file's snippets through REST with a reranker: the search leads with the function named after the
// question's words; the stand-in, counting them, prefers the comment that says them all.
describe("a found file's snippets, reordered by the reranker", () => {
  // Each function over a quarter of the chunk budget, so each is a chunk of its own.
  const BACKOFF = `/** The delay before a retry attempt: doubling from the base, capped, in milliseconds. */
export function retryBackoffDelay(attempt: number, options: { baseMs: number; maxMs: number }): number {
  if (!Number.isInteger(attempt) || attempt < 0) throw new RangeError(\`attempt must be a whole number, got \${attempt}\`);
  const doubled = options.baseMs * 2 ** Math.min(attempt, 30);
  return Math.min(doubled, options.maxMs);
}

/** Spreads callers out: a delay between half of it and all of it, so clients that failed together do not return together. */
export function jitter(delay: number, random: () => number = Math.random): number {
  if (!Number.isFinite(delay) || delay < 0) throw new RangeError(\`delay must be a finite, non-negative number, got \${delay}\`);
  const half = delay / 2;
  return half + random() * half;
}

/** Waits between retries: where the backoff for the next retry attempt is computed, then spread out by jitter. */
export async function waitBeforeRetry(attempt: number, signal?: AbortSignal): Promise<void> {
  const delay = jitter(retryBackoffDelay(attempt, { baseMs: 100, maxMs: 30_000 }));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, delay);
    signal?.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
  });
}
`;
  const SNIPPET_QUESTION = 'where is the delay before the next retry attempt computed';
  let repo: GitRepo;
  let stub: StubRerankerServer;
  let cohere: Searchable;

  beforeAll(async () => {
    repo = createGitRepo({ 'src/backoff.ts': BACKOFF });
    stub = await startStubRerankerServer();
    const service = await startTestService({
      role: 'all',
      env: {
        INDEX_DEBOUNCE_MS: '0',
        RERANK_PROVIDER: 'cohere',
        RERANK_URL: `${stub.url}/v1`,
        RERANK_MODEL: 'stub-reranker',
        RERANK_WEIGHT: '1',
      },
    });
    cohere = await searchable(service, repo);
    stub.reset();
  }, 120_000);
  afterAll(async () => {
    await cohere?.service.close();
    await stub?.close();
    repo?.destroy();
  });

  it("REST shows first the snippet the reranker scores best; the file's other snippets are sent after its first", async () => {
    const { service, token, projectPath } = cohere;
    // The stand-in scores the last document sent best and the first worst: the order the search chose, reversed.
    stub.script({
      kind: 'body',
      body: {
        id: 'scripted',
        results: [
          { index: 2, relevance_score: 0.9 },
          { index: 1, relevance_score: 0.5 },
          { index: 0, relevance_score: 0.1 },
        ],
      },
    });
    const query = new URLSearchParams({ q: SNIPPET_QUESTION });
    const response = await fetch(`${service.url}/api/v4/projects/${encodeURIComponent(projectPath)}/search/semantic?${query.toString()}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { results: Array<{ path: string; snippet_ranges: Array<{ content: string; score: number }> }> };
    const shown = body.results[0].snippet_ranges;
    // The file's document is its first snippet as the search chose it; its other two follow, one document each.
    const documents = stub.requests[0].body.documents!.map((document) => document.slice('src/backoff.ts\n'.length));
    expect(documents).toHaveLength(3);
    expect(shown.map((snippet) => snippet.content)).toEqual([documents[2], documents[1], documents[0]]);
    const scores = shown.map((snippet) => snippet.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });
});
