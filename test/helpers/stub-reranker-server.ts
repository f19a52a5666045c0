/**
 * A local reranker for tests: an HTTP server on 127.0.0.1 that speaks the two rerank wire formats,
 * so the real reranker clients run against it. It scores a document by the share of the query's
 * words it holds (wordOverlapScore): a cross-encoder's job done by counting.
 *
 *   POST /rerank, /v1/rerank, /v2/rerank with `documents`   Cohere / Jina / vLLM / llama.cpp:
 *        {model, query, documents, top_n?} → {id, model, results: [{index, relevance_score}], usage}
 *   POST /rerank with `texts`                                text-embeddings-inference:
 *        {query, texts, truncate?, raw_scores?} → [{index, score}]
 *
 * Results come best first, as the real servers send them. Errors are the servers' own shapes: TEI's
 * `{error, error_type}` (400 Empty, 422 Validation for more texts than its --max-client-batch-size),
 * `{message}` for the others (Cohere's). Each request takes the next scripted behaviour; when none is
 * left, it scores.
 *
 * @example
 *   const stub = await startStubRerankerServer({ apiKey: 'k' });
 *   // RERANK_PROVIDER=cohere RERANK_URL=`${stub.url}/v1` RERANK_MODEL=stub-reranker RERANK_API_KEY=k
 *   stub.script({ kind: 'status', status: 503 }); // the next request fails, later ones are scored
 *   await stub.close(); // in afterAll
 */
import http from 'node:http';
import { listenScripted, type ScriptedServer } from './scripted-server';

export type StubRerankBehaviour =
  /** Scores by word overlap (the default), after `delayMs` (default 0). */
  | { kind: 'score'; delayMs?: number }
  /** Answers with this status; `body` default: the format's error JSON ("stub error <status>"). */
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Answers 200 with this body as JSON (a malformed answer). */
  | { kind: 'body'; body: unknown }
  /** Never answers: holds the request open until the client goes away or the stub closes. */
  | { kind: 'hang' };

export type StubRerankFormat = 'cohere' | 'tei';

export type RecordedRerankRequest = {
  format: StubRerankFormat;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: { model?: string; query?: string; documents?: string[]; texts?: string[]; top_n?: number; [field: string]: unknown };
  /** The scores the stub gave, in the documents' order (empty when it did not score). */
  scores: number[];
};

export type StubRerankerServer = ScriptedServer<StubRerankBehaviour, RecordedRerankRequest>;

export type StubRerankerOptions = {
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
  /** TEI's --max-client-batch-size: more texts in one request are refused with 422. Default 32. */
  maxClientBatchSize?: number;
};

const STOP_WORDS = new Set(['a', 'an', 'the', 'is', 'of', 'to', 'in', 'and', 'or', 'it', 'how', 'does', 'what', 'where', 'which', 'with']);

/** Lowercase words, identifiers split (`acquireConnection` → acquire, connection; `pool_size` → pool, size). */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

/** The share of the query's distinct words (stop words aside) the document holds: 0 to 1. */
export function wordOverlapScore(query: string, document: string): number {
  const wanted = new Set(words(query).filter((word) => !STOP_WORDS.has(word)));
  if (wanted.size === 0) return 0;
  const held = new Set(words(document));
  let count = 0;
  for (const word of wanted) if (held.has(word)) count += 1;
  return count / wanted.size;
}

export async function startStubRerankerServer(options: StubRerankerOptions = {}): Promise<StubRerankerServer> {
  const queue: StubRerankBehaviour[] = [];
  const requests: RecordedRerankRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const maxBatch = options.maxClientBatchSize ?? 32;

  const server = http.createServer((request, response) => {
    readBody(request)
      .then(async (raw) => {
        const path = (request.url ?? '').split('?')[0];
        if (request.method !== 'POST' || !['/rerank', '/v1/rerank', '/v2/rerank'].includes(path))
          return sendJson(response, 404, { message: `the stub serves no ${request.method} ${path}` });
        let body: RecordedRerankRequest['body'];
        try {
          body = JSON.parse(raw) as RecordedRerankRequest['body'];
        } catch {
          return sendJson(response, 400, { message: 'the body is not JSON' });
        }
        // As llama.cpp tells them apart: TEI's requests carry `texts`, the others `documents`; TEI serves /rerank only.
        const format: StubRerankFormat = Array.isArray(body.texts) && path === '/rerank' ? 'tei' : 'cohere';
        const recorded: RecordedRerankRequest = { format, path, headers: request.headers, body, scores: [] };
        requests.push(recorded);
        const fail = (status: number, message: string, teiType: string) =>
          sendJson(response, status, format === 'tei' ? { error: message, error_type: teiType } : { message });
        if (options.apiKey && request.headers.authorization !== `Bearer ${options.apiKey}`)
          return fail(401, 'invalid api key', 'Unhealthy');
        const behaviour = queue.shift() ?? { kind: 'score' };
        if (behaviour.kind === 'hang') return undefined;
        if (behaviour.kind === 'status') {
          if (behaviour.body !== undefined) return sendJson(response, behaviour.status, behaviour.body, behaviour.headers);
          const message = `stub error ${behaviour.status}`;
          return sendJson(
            response,
            behaviour.status,
            format === 'tei' ? { error: message, error_type: 'Backend' } : { message },
            behaviour.headers,
          );
        }
        if (behaviour.kind === 'body') return sendJson(response, 200, behaviour.body);
        if (behaviour.delayMs) await wait(behaviour.delayMs);
        if (typeof body.query !== 'string') return fail(422, 'missing field `query`', 'Validation');
        const documents = format === 'tei' ? body.texts : body.documents;
        if (!Array.isArray(documents) || documents.some((document) => typeof document !== 'string'))
          return fail(422, `missing field \`${format === 'tei' ? 'texts' : 'documents'}\``, 'Validation');
        if (documents.length === 0) return fail(400, format === 'tei' ? '`texts` cannot be empty' : 'documents must not be empty', 'Empty');
        if (format === 'tei' && documents.length > maxBatch)
          return fail(422, `batch size ${documents.length} > maximum allowed batch size ${maxBatch}`, 'Validation');
        if (format === 'cohere' && typeof body.model !== 'string') return fail(400, 'model is required', 'Validation');
        recorded.scores = documents.map((document) => wordOverlapScore(body.query!, document));
        const ranked = recorded.scores.map((score, index) => ({ index, score })).sort((a, b) => b.score - a.score || a.index - b.index);
        if (format === 'tei') return sendJson(response, 200, ranked);
        const topN = typeof body.top_n === 'number' && body.top_n > 0 ? body.top_n : ranked.length;
        return sendJson(response, 200, {
          id: `rerank-${requests.length}`,
          model: body.model,
          results: ranked.slice(0, topN).map((rank) => ({ index: rank.index, relevance_score: rank.score })),
          usage: { total_tokens: documents.reduce((sum, document) => sum + words(document).length, words(body.query).length) },
        });
      })
      .catch(() => response.destroy());
  });

  const wait = (delayMs: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, delayMs);
      timers.add(timer);
    });

  return listenScripted(server, { queue, requests, timers });
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function sendJson(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(text);
}
