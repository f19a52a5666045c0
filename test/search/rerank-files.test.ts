import { Writable } from 'node:stream';
import pino from 'pino';
import { CohereReranker } from '../../src/llm/rerankers/cohere.reranker';
import type { Reranking } from '../../src/llm/rerankers/reranker';
import type { FileHits } from '../../src/search/group-hits';
import { cutText, rerankDocument, rerankFiles } from '../../src/search/rerank-files';
import { startStubRerankerServer, type StubRerankerServer } from '../helpers/stub-reranker-server';

const QUESTION = 'where is the retry backoff computed';

/** A found file as groupHits gives it: its first snippet is what the reranker reads. */
const file = (path: string, content: string, score: number): FileHits => ({
  path,
  blob: '0'.repeat(40),
  language: 'typescript',
  score,
  snippets: [{ startLine: 1, endLine: content.split('\n').length, content, score, symbol: null }],
});

// The search's order is a, b, c; the stand-in's word overlap puts them c (all four words), b (two), a (none).
const FILES = [
  file('src/a.ts', 'export const a = 1;', 1),
  file('src/b.ts', 'function retry() { return backoff; }', 0.8),
  file('src/c.ts', '// the retry backoff is computed here', 0.5),
];

function captureLog(): { lines: Array<Record<string, unknown>>; logger: pino.Logger } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, stream) };
}

// rerankFiles against the stand-in speaking Cohere's format: the fusion, its bounds and its fallback.
describe('rerankFiles', () => {
  let stub: StubRerankerServer;
  let reranker: CohereReranker;
  const reranking = (overrides: Partial<Reranking> = {}): Reranking => ({
    reranker,
    candidates: 30,
    weight: 0.5,
    maxChars: 1_200,
    logger: captureLog().logger,
    ...overrides,
  });
  beforeAll(async () => {
    stub = await startStubRerankerServer();
    reranker = new CohereReranker({ baseUrl: `${stub.url}/v1`, model: 'stub-reranker', timeoutMs: 500 });
  });
  afterEach(() => stub.reset());
  afterAll(() => stub.close());

  it.each([
    // Weight 1: the reranker's order alone.
    [1, 30, ['src/c.ts', 'src/b.ts', 'src/a.ts']],
    // Equal weights: a (1st, 3rd) and c (3rd, 1st) tie, and a tie goes to the reranker; b (2nd, 2nd) falls below both.
    [0.5, 30, ['src/c.ts', 'src/a.ts', 'src/b.ts']],
    // A light reranker breaks no more than near-ties: the search's order stands.
    [0.2, 30, ['src/a.ts', 'src/b.ts', 'src/c.ts']],
    // Only the first two are candidates: c keeps its place after them.
    [1, 2, ['src/b.ts', 'src/a.ts', 'src/c.ts']],
  ])('with weight %s over %s candidates orders %j', async (weight, candidates, order) => {
    const result = await rerankFiles(FILES, { question: QUESTION, reranking: reranking({ weight, candidates }), projectId: 1 });
    expect(result.reranked).toBe(true);
    expect(result.files.map((hits) => hits.path)).toEqual(order);
    // Each place keeps its score, so scores still fall with the order.
    expect(result.files.map((hits) => hits.score)).toEqual([1, 0.8, 0.5]);
    expect(stub.requests[0].body.documents).toEqual(FILES.slice(0, candidates).map((hits) => `${hits.path}\n${hits.snippets[0].content}`));
  });

  it('sends each file as its path and first snippet, and the question, cut to maxChars', async () => {
    const long = file('src/long.ts', `// retry backoff\n${'x'.repeat(5_000)}`, 0.4);
    await rerankFiles([...FILES, long], {
      question: `${QUESTION} ${'y'.repeat(500)}`,
      reranking: reranking({ maxChars: 200 }),
      projectId: 1,
    });
    const sent = stub.requests[0].body;
    expect(sent.documents![3]).toBe(`src/long.ts\n// retry backoff\n${'x'.repeat(200 - 'src/long.ts\n// retry backoff\n'.length)}`);
    expect(sent.documents!.every((document) => document.length <= 200)).toBe(true);
    expect(sent.query).toHaveLength(200);
    // Never half of a character outside the Basic Multilingual Plane.
    expect(cutText('ab😀', 3)).toBe('ab');
    expect(rerankDocument({ path: 'p', snippets: [] }, 100)).toBe('p\n');
  });

  it("reorders the first files' snippets by their own documents, sent after the files'", async () => {
    const snippet = (startLine: number, content: string, score: number) => ({
      startLine,
      endLine: startLine,
      content,
      score,
      symbol: null,
    });
    // The search leads with the import line; the stand-in prefers the comment that holds all four words.
    const multi: FileHits = {
      ...file('src/retry.ts', '', 1),
      snippets: [
        snippet(1, "import { sleep } from './sleep';", 0.9),
        snippet(10, 'function retry() { return backoff(); }', 0.7),
        snippet(20, '// where the retry backoff is computed', 0.5),
      ],
    };
    const later = Array.from({ length: 5 }, (_, index) => ({
      ...file(`src/later${index}.ts`, 'export const later = 1;', 0.4 - index / 100),
      snippets: [snippet(1, 'export const later = 1;', 0.3), snippet(5, '// retry backoff computed', 0.2)],
    }));
    const result = await rerankFiles([multi, ...later], { question: QUESTION, reranking: reranking({ weight: 1 }), projectId: 1 });
    const retry = result.files.find((hits) => hits.path === 'src/retry.ts')!;
    expect(retry.snippets.map((hits) => hits.startLine)).toEqual([20, 10, 1]);
    // Each place keeps its score, so they still fall with the order.
    expect(retry.snippets.map((hits) => hits.score)).toEqual([0.9, 0.7, 0.5]);
    // One document per file first, then the other snippets of the first five files; the sixth's are not read.
    const documents = stub.requests[0].body.documents!;
    expect(documents).toHaveLength(6 + 2 + 4);
    expect(documents.slice(6, 8)).toEqual([
      'src/retry.ts\nfunction retry() { return backoff(); }',
      'src/retry.ts\n// where the retry backoff is computed',
    ]);
    expect(documents.slice(8).map((document) => document.split('\n')[0])).toEqual([
      'src/later0.ts',
      'src/later1.ts',
      'src/later2.ts',
      'src/later3.ts',
    ]);
    expect(result.files.find((hits) => hits.path === 'src/later4.ts')!.snippets[0].startLine).toBe(1);
    expect(result.files.find((hits) => hits.path === 'src/later0.ts')!.snippets[0].startLine).toBe(5);
  });

  it('asks nothing when there is nothing to reorder', async () => {
    const result = await rerankFiles(FILES.slice(0, 1), { question: QUESTION, reranking: reranking(), projectId: 1 });
    expect(result).toEqual({ files: FILES.slice(0, 1), reranked: false });
    expect(stub.requests).toHaveLength(0);
  });

  it.each([
    ['an HTTP error', { kind: 'status', status: 400 } as const, { kind: 'http', status: 400, retryable: false }],
    ['a timeout', { kind: 'hang' } as const, { kind: 'timeout', retryable: true }],
    ['a malformed answer', { kind: 'body', body: { results: [] } } as const, { kind: 'stream', retryable: false }],
  ])('keeps the search order on %s, and logs code_search_rerank_failed', async (_what, behaviour, logged) => {
    const { lines, logger } = captureLog();
    stub.script(behaviour, behaviour);
    const result = await rerankFiles(FILES, { question: QUESTION, reranking: reranking({ weight: 1, logger }), projectId: 7 });
    expect(result).toEqual({ files: FILES, reranked: false });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      event: 'code_search_rerank_failed',
      projectId: 7,
      provider: 'cohere',
      model: 'stub-reranker',
      candidates: 3,
      ...logged,
    });
    // The question and the code stay out of the log.
    expect(JSON.stringify(lines[0])).not.toContain('retry backoff');
  });
});
