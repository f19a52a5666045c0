import { loadConfig } from '../../src/config';
import { CohereReranker } from '../../src/llm/rerankers/cohere.reranker';
import { createReranker } from '../../src/llm/rerankers/create-reranker';
import { TeiReranker } from '../../src/llm/rerankers/tei.reranker';
import { LlmError } from '../../src/llm/types';
import { startStubRerankerServer, wordOverlapScore, type StubRerankerServer } from '../helpers/stub-reranker-server';

const QUERY = 'ping an idle connection before reuse';
const DOCUMENTS = [
  'src/pool.ts\nexport class Pool { acquire() {} }',
  'README.md\nThe pool pings an idle connection before reuse.',
  'src/pool.test.ts\nit("pings an idle connection before reuse", () => expect(ping).toHaveBeenCalled())',
  'CHANGELOG.md\n- drop an idle connection when its ping fails',
];
const expected = DOCUMENTS.map((document) => wordOverlapScore(QUERY, document));

async function rejection(promise: Promise<unknown>): Promise<LlmError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(LlmError);
  return error as LlmError;
}

// The two wire formats against a stand-in that speaks them: scores come back in the documents' order.
describe('rerankers', () => {
  let stub: StubRerankerServer;
  beforeAll(async () => {
    stub = await startStubRerankerServer({ apiKey: 'secret-key', maxClientBatchSize: 2 });
  });
  afterEach(() => stub.reset());
  afterAll(() => stub.close());

  it('cohere: POSTs {model, query, documents, top_n} to <base>/rerank with the key; reads {index, relevance_score}', async () => {
    const reranker = new CohereReranker({ baseUrl: `${stub.url}/v1/`, model: 'stub-reranker', apiKey: 'secret-key' });
    const scores = await reranker.rerank({ query: QUERY, documents: DOCUMENTS });
    expect(scores).toEqual(expected);
    // The stand-in answered best first: the client put them back in the documents' order.
    expect(new Set(expected).size).toBeGreaterThan(1);
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]).toMatchObject({
      format: 'cohere',
      path: '/v1/rerank',
      headers: { authorization: 'Bearer secret-key', 'content-type': 'application/json' },
      body: { model: 'stub-reranker', query: QUERY, documents: DOCUMENTS, top_n: DOCUMENTS.length },
    });
  });

  it('tei: POSTs {query, texts, truncate} to <base>/rerank in batches the server accepts, and reads [{index, score}]', async () => {
    const reranker = new TeiReranker({ baseUrl: stub.url, apiKey: 'secret-key', batchSize: 2 });
    expect(await reranker.rerank({ query: QUERY, documents: DOCUMENTS })).toEqual(expected);
    expect(stub.requests.map((request) => [request.format, request.path, request.body])).toEqual([
      ['tei', '/rerank', { query: QUERY, texts: DOCUMENTS.slice(0, 2), truncate: true }],
      ['tei', '/rerank', { query: QUERY, texts: DOCUMENTS.slice(2), truncate: true }],
    ]);
    // One request over the server's --max-client-batch-size is refused (422), not retried.
    stub.reset();
    const oversized = await rejection(
      new TeiReranker({ baseUrl: stub.url, apiKey: 'secret-key', batchSize: 4 }).rerank({ query: QUERY, documents: DOCUMENTS }),
    );
    expect(oversized).toMatchObject({ kind: 'http', status: 422, isRetryable: false });
    expect(oversized.message).toContain('batch size 4 > maximum allowed batch size 2');
    expect(stub.requests).toHaveLength(1);
  });

  it('retries a retryable failure once within its time limit, and never a refusal', async () => {
    const reranker = new CohereReranker({ baseUrl: stub.url, model: 'm', apiKey: 'secret-key' });
    stub.script({ kind: 'status', status: 503 });
    expect(await reranker.rerank({ query: QUERY, documents: DOCUMENTS })).toEqual(expected);
    expect(stub.requests).toHaveLength(2);

    stub.reset();
    stub.script({ kind: 'status', status: 400, body: { message: 'invalid request: top_n must be positive' } });
    const refused = await rejection(reranker.rerank({ query: QUERY, documents: DOCUMENTS }));
    expect(refused).toMatchObject({ kind: 'http', status: 400, isRetryable: false });
    expect(refused.message).toContain('top_n must be positive');
    expect(stub.requests).toHaveLength(1);

    // A Retry-After past the time limit is not waited for: the 429 is thrown as it is.
    stub.reset();
    stub.script({ kind: 'status', status: 429, headers: { 'retry-after': '30' } });
    const limited = await rejection(reranker.rerank({ query: QUERY, documents: DOCUMENTS }));
    expect(limited).toMatchObject({ kind: 'http', status: 429, isRetryable: true });
    expect(stub.requests).toHaveLength(1);
  });

  it('gives up at its time limit with a timeout error, retries included', async () => {
    const reranker = new CohereReranker({ baseUrl: stub.url, model: 'm', apiKey: 'secret-key', timeoutMs: 300 });
    stub.script({ kind: 'hang' });
    const started = Date.now();
    const error = await rejection(reranker.rerank({ query: QUERY, documents: DOCUMENTS }));
    expect(error).toMatchObject({ kind: 'timeout', isRetryable: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it.each([
    ['a result missing', { results: [{ index: 0, relevance_score: 1 }] }, 'no score for document 1'],
    ['an index out of range', { results: DOCUMENTS.map((_, index) => ({ index: index + 1, relevance_score: 1 })) }, 'index out of range'],
    ['a score that is not a number', { results: DOCUMENTS.map((_, index) => ({ index, relevance_score: 'high' })) }, 'not a number'],
    ['no results list', { data: [] }, 'no results list'],
  ])('refuses an answer with %s', async (_what, body, message) => {
    const reranker = new CohereReranker({ baseUrl: stub.url, model: 'm', apiKey: 'secret-key' });
    stub.script({ kind: 'body', body });
    const error = await rejection(reranker.rerank({ query: QUERY, documents: DOCUMENTS }));
    expect(error).toMatchObject({ kind: 'stream', isRetryable: false });
    expect(error.message).toContain(message);
  });

  it('keeps the key out of its errors, and names the status of a wrong key', async () => {
    const wrong = new TeiReranker({ baseUrl: stub.url, apiKey: 'not-the-key' });
    const error = await rejection(wrong.rerank({ query: QUERY, documents: DOCUMENTS.slice(0, 1) }));
    expect(error).toMatchObject({ kind: 'http', status: 401 });
    stub.script({ kind: 'status', status: 500, body: { message: 'upstream said secret-key is bad' } });
    const echoed = await rejection(
      new CohereReranker({ baseUrl: stub.url, model: 'm', apiKey: 'secret-key', maxRetries: 0 }).rerank({
        query: QUERY,
        documents: DOCUMENTS,
      }),
    );
    expect(echoed.message).toContain('[redacted]');
    expect(echoed.message).not.toContain('secret-key');
  });
});

describe('RERANK_* configuration', () => {
  it('is off by default', () => {
    const config = loadConfig({});
    expect(config.rerank).toMatchObject({ provider: 'none', topN: 30, weight: 0.5, maxChars: 1_200, timeoutMs: 2_000 });
    expect(createReranker(config.rerank)).toBeNull();
  });

  it('builds the named wire format', () => {
    const cohere = createReranker(
      loadConfig({ RERANK_PROVIDER: 'cohere', RERANK_URL: 'http://127.0.0.1:1/v1/', RERANK_MODEL: 'bge-reranker-v2-m3' }).rerank,
    );
    expect(cohere).toMatchObject({ name: 'cohere', model: 'bge-reranker-v2-m3' });
    expect(createReranker(loadConfig({ RERANK_PROVIDER: 'tei', RERANK_URL: 'http://127.0.0.1:1' }).rerank)).toMatchObject({
      name: 'tei',
      model: null,
    });
  });

  it.each([
    [{ RERANK_PROVIDER: 'jina' }, 'RERANK_PROVIDER: must be none, cohere or tei'],
    [{ RERANK_PROVIDER: 'tei' }, 'RERANK_URL: must be set when RERANK_PROVIDER is tei'],
    [{ RERANK_PROVIDER: 'cohere', RERANK_URL: 'http://127.0.0.1:1/v1' }, 'RERANK_MODEL: must be set when RERANK_PROVIDER is cohere'],
    [{ RERANK_URL: 'ftp://x' }, 'RERANK_URL: must be a URL starting with http:// or https://'],
    [{ RERANK_TOP_N: '1' }, 'RERANK_TOP_N: must be at least 2'],
    [{ RERANK_TOP_N: '101' }, 'RERANK_TOP_N: must be at most 100'],
    [{ RERANK_WEIGHT: '0' }, 'RERANK_WEIGHT: must be above 0'],
    [{ RERANK_WEIGHT: '1.5' }, 'RERANK_WEIGHT: must be at most 1'],
    [{ RERANK_MAX_CHARS: '50' }, 'RERANK_MAX_CHARS: must be at least 100'],
    [{ RERANK_TIMEOUT_MS: '0' }, 'RERANK_TIMEOUT_MS: must be positive'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
