import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { embedderForVersion } from '../../src/llm/embedders/create-embedder';
import { identifierTerms, LexicalEmbedder } from '../../src/llm/embedders/lexical.embedder';
import { stemWord, STOP_WORDS } from '../../src/llm/embedders/terms';
import { OpenAiCompatibleEmbedder } from '../../src/llm/embedders/openai-compatible.embedder';
import { vectorBinary } from '../../src/db/pg-binary';

const cosine = (a: number[], b: number[]) => a.reduce((sum, value, index) => sum + value * b[index], 0);

describe('lexical embedder (the default, no model)', () => {
  const embedder = new LexicalEmbedder();

  it.each([
    ['parseConnection', ['parse', 'connection', 'parse_connection']],
    ['parse_connection', ['parse', 'connection', 'parse_connection']],
    ['HTTPServer.listen', ['http', 'server', 'http_server', 'listen']],
  ])('splits %s into identifier terms', (text, terms) => {
    expect(identifierTerms(text)).toEqual(terms);
  });

  it('splits runs of capitals before the word they start, in time linear in the run', () => {
    expect(identifierTerms('HTTPServer parseJSONBody XMLHttpRequest ABCDef')).toEqual(
      expect.arrayContaining(['http', 'server', 'json', 'body', 'xml', 'abc', 'def']),
    );
    // 300,000 capitals then a word: the split once rescanned the run from each of its capitals.
    expect(identifierTerms(`${'A'.repeat(300_000)}Bc`)).toEqual(['a'.repeat(300_000), 'bc', `${'a'.repeat(300_000)}_bc`]);
  });

  it('gives unit vectors of its size, the same every time', async () => {
    const [first] = await embedder.embed(['export function parseConnection(url: string) {}']);
    const [again] = await embedder.embed(['export function parseConnection(url: string) {}']);
    expect(first).toHaveLength(512);
    expect(cosine(first, first)).toBeCloseTo(1, 6);
    expect(again).toEqual(first);
    expect(embedder.version).toBe('lexical-v2-512');
  });

  it('version 2 treats inflected forms alike; version 1 (for old indexes) still embeds as before', async () => {
    const [plural, singular] = await embedder.embed(['buffering packets', 'buffer packet']);
    expect(cosine(plural, singular)).toBeCloseTo(1, 6);
    const first = new LexicalEmbedder({ algorithm: 1 });
    expect(first.version).toBe('lexical-v1-512');
    const [oldPlural, oldSingular] = await first.embed(['buffering packets', 'buffer packet']);
    expect(cosine(oldPlural, oldSingular)).toBeLessThan(0.5);
    expect(embedderForVersion(embedder, 'lexical-v1-256')).toMatchObject({ version: 'lexical-v1-256', dimensions: 256 });
    expect(embedderForVersion(embedder, 'lexical-v2-512')).toBe(embedder);
    expect(embedderForVersion(embedder, 'openai:text-embedding-3-small:1536')).toBeNull();
  });

  // The algorithm as first written (features as strings, each hashed whole): the embedder's faster
  // code must give the very same numbers, or every stored index would need embedding again.
  function referenceVector(text: string, dimensions: number): number[] {
    const hash = (feature: string) => {
      let value = 0x811c9dc5;
      for (let index = 0; index < feature.length; index += 1) value = Math.imul(value ^ feature.charCodeAt(index), 0x01000193);
      return value >>> 0;
    };
    const terms = identifierTerms(text)
      .filter((term) => !STOP_WORDS.has(term))
      .map(stemWord);
    const counts = new Map<string, number>();
    const add = (feature: string) => counts.set(feature, (counts.get(feature) ?? 0) + 1);
    terms.forEach((term, index) => {
      add(term);
      if (index > 0) add(`${terms[index - 1]} ${term}`);
    });
    const vector = new Array<number>(dimensions).fill(0);
    for (const [feature, count] of counts) {
      const bucket = hash(feature);
      vector[bucket % dimensions] += (bucket & 0x80000000 ? -1 : 1) * (1 + Math.log(count)) * (feature.includes(' ') ? 0.5 : 1);
    }
    const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
    return norm === 0 ? vector : vector.map((value) => value * (1 / norm));
  }

  it('gives exactly the numbers of the algorithm as first written, for whole files of code', async () => {
    const directory = path.join(__dirname, '..', 'indexing', 'fixtures');
    const texts = [...readdirSync(directory).map((name) => readFileSync(path.join(directory, name), 'utf8')), 'the of', 'x x x x', ''];
    for (const dimensions of [512, 100]) {
      const sized = new LexicalEmbedder({ dimensions });
      const vectors = await sized.embed(texts);
      vectors.forEach((vector, index) => expect(vector).toEqual(referenceVector(texts[index], dimensions)));
    }
  });

  it("gives the indexer the same numbers unnormalised with their factor (termVector), in the database's binary form", async () => {
    const directory = path.join(__dirname, '..', 'indexing', 'fixtures');
    const texts = [...readdirSync(directory).map((name) => readFileSync(path.join(directory, name), 'utf8')), 'the of', ''];
    const stems = new Map<string, string>();
    for (const text of texts) {
      const terms = identifierTerms(text);
      const { values, scale } = embedder.termVector(terms, stems);
      expect(Buffer.from(vectorBinary(values, scale))).toEqual(Buffer.from(vectorBinary(referenceVector(text, 512))));
    }
  });

  it('puts a question near the code that shares its identifiers', async () => {
    const [question, parser, unrelated] = await embedder.embed([
      'how do we parse the connection string?',
      'function parseConnectionString(raw) { const url = new URL(raw); return { host: url.hostname, port: url.port }; }',
      'class ImageResizer { resize(width, height) { return sharp(this.input).resize(width, height); } }',
    ]);
    expect(cosine(question, parser)).toBeGreaterThan(cosine(question, unrelated) + 0.2);
  });
});

describe('OpenAI-compatible embedder', () => {
  let server: http.Server;
  let url: string;
  const requests: Array<{ input: string[]; model: string; authorization?: string }> = [];
  const script: Array<{ status: number; headers?: Record<string, string> }> = [];
  let dimensions = 4;

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const parsed = JSON.parse(body) as { input: string[]; model: string };
        requests.push({ ...parsed, authorization: request.headers.authorization });
        const next = script.shift();
        if (next) {
          response.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
          response.end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit' } }));
          return;
        }
        // The real wire format, in reverse order to check that `index` is honoured.
        const data = parsed.input
          .map((text, index) => ({ object: 'embedding', index, embedding: Array.from({ length: dimensions }, (_v, d) => text.length + d) }))
          .reverse();
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ object: 'list', data, model: parsed.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    requests.length = 0;
    script.length = 0;
    dimensions = 4;
  });

  it('embeds in batches, in order, normalised, with the key', async () => {
    const embedder = new OpenAiCompatibleEmbedder({ model: 'nomic', baseUrl: url, apiKey: 'k', dimensions: 4, batchSize: 2 });
    const vectors = await embedder.embed(['a', 'bb', 'ccc']);
    expect(requests.map((request) => request.input)).toEqual([['a', 'bb'], ['ccc']]);
    expect(requests[0]).toMatchObject({ model: 'nomic', authorization: 'Bearer k' });
    expect(vectors).toHaveLength(3);
    for (const vector of vectors) expect(cosine(vector, vector)).toBeCloseTo(1, 6);
    const raw = [3, 4, 5, 6];
    const norm = Math.sqrt(raw.reduce((sum, value) => sum + value * value, 0));
    expect(vectors[2][0]).toBeCloseTo(3 / norm, 6);
    expect(embedder.version).toBe('openai:nomic:4');
  });

  it('retries a 429 and then answers', async () => {
    script.push({ status: 429, headers: { 'retry-after-ms': '10' } });
    const vectors = await new OpenAiCompatibleEmbedder({ model: 'm', baseUrl: url, dimensions: 4 }).embed(['x']);
    expect(vectors).toHaveLength(1);
    expect(requests).toHaveLength(2);
  });

  it('does not retry a 400, and says why', async () => {
    script.push({ status: 400 });
    await expect(new OpenAiCompatibleEmbedder({ model: 'm', baseUrl: url, dimensions: 4 }).embed(['x'])).rejects.toMatchObject({
      kind: 'http',
      status: 400,
    });
    expect(requests).toHaveLength(1);
  });

  it('refuses vectors of the wrong size', async () => {
    dimensions = 3;
    await expect(new OpenAiCompatibleEmbedder({ model: 'm', baseUrl: url, dimensions: 4 }).embed(['x'])).rejects.toThrow(
      /expected 1 vectors of 4 dimensions/,
    );
  });

  it('reports a server that cannot be reached', async () => {
    await expect(
      new OpenAiCompatibleEmbedder({ model: 'm', baseUrl: 'http://127.0.0.1:1/v1', dimensions: 4, maxRetries: 0 }).embed(['x']),
    ).rejects.toMatchObject({ kind: 'connection' });
  });
});
