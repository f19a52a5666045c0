/**
 * A local chat model for tests: an HTTP server on 127.0.0.1 that speaks the real wire formats, so
 * the real provider clients run against it.
 *
 *   POST /v1/chat/completions and /chat/completions   OpenAI chat completions (streaming)
 *   POST /v1/messages                                  Anthropic Messages (streaming)
 *
 * Its `url` works as the base URL of both providers (OpenAI's path is served with and without /v1).
 * Each request takes the next scripted behaviour; when none is left, the default one.
 *
 * @example
 *   const stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
 *   const config = loadConfig({ LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub-model' });
 *   stub.script({ kind: 'status', status: 500 }); // the next request fails, later ones echo
 *   // ... run the chat; then: expect(stub.requests[1].body.messages).toContainEqual({ role: 'user', content: 'hi' });
 *   await stub.close(); // in afterAll
 */
import http from 'node:http';
import { listenScripted, type ScriptedServer } from './scripted-server';

/** What the stub does with one request. */
export type StubBehaviour =
  /**
   * Sends the headers and the opening events at once, then each piece after `delayMs` (default 0),
   * then the finish (`finishReason` default 'stop') and the end marker ([DONE] or message_stop).
   * With `cut`, stops after `afterPieces` pieces, about 30 ms after the last one so the client has
   * read them: 'destroy' (default) destroys the socket mid-response, 'end' ends the response
   * cleanly but without the finish and end marker.
   */
  | {
      kind: 'stream';
      pieces: string[];
      delayMs?: number;
      finishReason?: 'stop' | 'length';
      cut?: { afterPieces: number; how?: 'destroy' | 'end' };
    }
  /** Streams `You said: <last user message>` in 3 pieces: proves the prompt reached the model. */
  | { kind: 'echo' }
  /**
   * Answers with this status. `body`: a string is sent as it is, anything else as JSON; default:
   * the format's error JSON with the message "stub error <status>". `headers` e.g. { 'retry-after': '1' }.
   */
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** The format's real "prompt too long" answer: 400 with context_length_exceeded / "prompt is too long". */
  | { kind: 'prompt-too-long' }
  /**
   * Streams the pieces, then an error inside the stream (Anthropic's `error` event, OpenAI's
   * `{"error": ...}` chunk). `errorType` default 'overloaded_error'.
   */
  | { kind: 'error-event'; pieces?: string[]; errorType?: string }
  /** Never answers: holds the request open until the client goes away or the stub closes. */
  | { kind: 'hang' };

export type StubWireFormat = 'openai' | 'anthropic';

/** How an exchange ended: the stub finished it, the client went away first, or a `cut` ended it. */
export type StubRequestEnd = 'completed' | 'client-closed' | 'cut';

/** The request body as JSON; the fields our providers send are typed. */
export type StubRequestBody = {
  model?: string;
  messages?: { role: string; content: unknown }[];
  system?: string;
  max_tokens?: number;
  temperature?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [field: string]: unknown;
};

export type RecordedRequest = {
  format: StubWireFormat;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: StubRequestBody;
  /** Date.now() when the request body had arrived. */
  receivedAt: number;
  /** Settles when the exchange is over. */
  ended: Promise<StubRequestEnd>;
};

/** The base URL serves either provider; `requests` stays empty when started with `record: false`. */
export type StubLlmServer = ScriptedServer<StubBehaviour, RecordedRequest>;

export type StubLlmServerOptions = {
  /** What requests get once the script is used up. Default: stream "Hello from the stub." in 3 pieces. */
  defaultBehaviour?: StubBehaviour;
  /**
   * Keep every request in `requests` (default true). A bench turns it off: tens of thousands of kept
   * bodies and responses grow the heap of the bench's process, whose garbage collection then takes
   * the cores the service is measured on.
   */
  record?: boolean;
};

const DEFAULT_BEHAVIOUR: StubBehaviour = { kind: 'stream', pieces: ['Hello', ' from the', ' stub.'] };

/** The pause before a `cut`, so the client has read the pieces before the connection dies. */
const CUT_PAUSE_MS = 30;

/** Starts the stub on a free port of 127.0.0.1. */
export async function startStubLlmServer(options: StubLlmServerOptions = {}): Promise<StubLlmServer> {
  const queue: StubBehaviour[] = [];
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const wait = (delayMs: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, delayMs);
      timers.add(timer);
    });

  const server = http.createServer((request, response) => {
    const format = routeFormat(request.method, request.url);
    readBody(request)
      .then(async (rawBody) => {
        if (!format) return sendJson(response, 404, { error: { message: `the stub serves no ${request.method} ${request.url}` } });
        let body: StubRequestBody;
        try {
          body = JSON.parse(rawBody) as StubRequestBody;
        } catch {
          return sendJson(response, 400, errorBody(format, 'invalid_request_error', 'the body is not JSON'));
        }
        const behaviour = queue.shift() ?? options.defaultBehaviour ?? DEFAULT_BEHAVIOUR;
        const exchange = { format, body, response, wait, cut: false };
        if (options.record !== false)
          requests.push({
            format,
            path: request.url ?? '',
            headers: request.headers,
            body,
            receivedAt: Date.now(),
            ended: new Promise((resolve) => {
              response.on('close', () => resolve(exchange.cut ? 'cut' : response.writableFinished ? 'completed' : 'client-closed'));
            }),
          });
        if (body.stream !== true) return sendJson(response, 400, errorBody(format, 'invalid_request_error', 'the stub only streams'));
        await behave(exchange, behaviour);
      })
      .catch(() => response.destroy());
  });

  return listenScripted(server, { queue, requests, timers });
}

type Exchange = {
  format: StubWireFormat;
  body: StubRequestBody;
  response: http.ServerResponse;
  wait: (delayMs: number) => Promise<void>;
  /** Set when the stub ends the exchange early on purpose. */
  cut: boolean;
};

function routeFormat(method: string | undefined, url: string | undefined): StubWireFormat | undefined {
  if (method !== 'POST') return undefined;
  const path = (url ?? '').split('?')[0];
  if (path === '/v1/chat/completions' || path === '/chat/completions') return 'openai';
  if (path === '/v1/messages') return 'anthropic';
  return undefined;
}

async function behave(exchange: Exchange, behaviour: StubBehaviour): Promise<void> {
  const { format, response } = exchange;
  switch (behaviour.kind) {
    case 'stream':
      return streamPieces(exchange, behaviour);
    case 'echo':
      return streamPieces(exchange, { pieces: splitInThree(`You said: ${lastUserMessage(exchange.body)}`) });
    case 'status': {
      const headers = { 'content-type': 'application/json', ...behaviour.headers };
      const body = behaviour.body === undefined ? errorBody(format, 'api_error', `stub error ${behaviour.status}`) : behaviour.body;
      response.writeHead(behaviour.status, headers).end(typeof body === 'string' ? body : JSON.stringify(body));
      return;
    }
    case 'prompt-too-long':
      return sendJson(
        response,
        400,
        format === 'openai'
          ? {
              error: {
                message:
                  "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the " +
                  'length of the messages.',
                type: 'invalid_request_error',
                param: 'messages',
                code: 'context_length_exceeded',
              },
            }
          : errorBody(format, 'invalid_request_error', 'prompt is too long: 250000 tokens > 200000 maximum'),
      );
    case 'error-event': {
      const wire = wireFormat(exchange);
      startStream(response);
      void write(response, wire.open());
      for (const piece of behaviour.pieces ?? []) void write(response, wire.piece(piece));
      void write(response, wire.error(behaviour.errorType ?? 'overloaded_error'));
      response.end();
      return;
    }
    case 'hang':
      return;
  }
}

async function streamPieces(
  exchange: Exchange,
  stream: { pieces: string[]; delayMs?: number; finishReason?: 'stop' | 'length'; cut?: { afterPieces: number; how?: 'destroy' | 'end' } },
): Promise<void> {
  const { response } = exchange;
  const wire = wireFormat(exchange);
  startStream(response);
  void write(response, wire.open());
  const sent = stream.cut ? stream.pieces.slice(0, stream.cut.afterPieces) : stream.pieces;
  for (const piece of sent) {
    if (stream.delayMs) await exchange.wait(stream.delayMs);
    if (response.destroyed) return;
    await write(response, wire.piece(piece));
  }
  if (stream.cut) {
    await exchange.wait(CUT_PAUSE_MS);
    exchange.cut = true;
    if (stream.cut.how === 'end') response.end();
    else response.socket?.destroy();
    return;
  }
  void write(response, wire.close(stream.finishReason ?? 'stop', sent.length));
  response.end();
}

type WireFormat = {
  open(): string;
  piece(text: string): string;
  close(finishReason: 'stop' | 'length', pieceCount: number): string;
  error(errorType: string): string;
};

/**
 * Token counts are made up but predictable: input = words in all messages (and system), output =
 * the number of pieces.
 */
function wireFormat({ format, body }: Exchange): WireFormat {
  const model = body.model ?? 'stub-model';
  const inputTokens = countWords(body);
  if (format === 'openai') {
    const chunk = (delta: object, finishReason: string | null) =>
      data({
        id: 'chatcmpl-stub',
        object: 'chat.completion.chunk',
        created: 0,
        model,
        choices: [{ index: 0, delta, finish_reason: finishReason }],
      });
    return {
      open: () => chunk({ role: 'assistant', content: '' }, null),
      piece: (text) => chunk({ content: text }, null),
      close: (finishReason, pieceCount) =>
        chunk({}, finishReason) +
        (body.stream_options?.include_usage
          ? data({
              id: 'chatcmpl-stub',
              object: 'chat.completion.chunk',
              created: 0,
              model,
              choices: [],
              usage: { prompt_tokens: inputTokens, completion_tokens: pieceCount, total_tokens: inputTokens + pieceCount },
            })
          : '') +
        'data: [DONE]\n\n',
      error: (errorType) => data({ error: { message: 'The server had an error while processing your request.', type: errorType } }),
    };
  }
  return {
    open: () =>
      event('message_start', {
        type: 'message_start',
        message: {
          id: 'msg_stub',
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: inputTokens, output_tokens: 1 },
        },
      }) +
      event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
      event('ping', { type: 'ping' }),
    piece: (text) => event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
    close: (finishReason, pieceCount) =>
      event('content_block_stop', { type: 'content_block_stop', index: 0 }) +
      event('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: finishReason === 'stop' ? 'end_turn' : 'max_tokens', stop_sequence: null },
        usage: { output_tokens: pieceCount },
      }) +
      event('message_stop', { type: 'message_stop' }),
    error: (errorType) =>
      event('error', {
        type: 'error',
        error: { type: errorType, message: errorType === 'overloaded_error' ? 'Overloaded' : 'stub stream error' },
      }),
  };
}

const data = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
const event = (name: string, payload: unknown) => `event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`;

function errorBody(format: StubWireFormat, type: string, message: string): unknown {
  return format === 'openai' ? { error: { message, type, param: null, code: null } } : { type: 'error', error: { type, message } };
}

function startStream(response: http.ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  response.flushHeaders();
}

/** Resolves once the bytes are handed to the socket, so a later cut cannot swallow them. */
function write(response: http.ServerResponse, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (response.destroyed) return resolve();
    response.write(text, () => resolve());
  });
}

function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  // Anthropic also accepts content as blocks: [{ type: 'text', text }].
  if (Array.isArray(content))
    return content.map((block: { text?: unknown }) => (typeof block?.text === 'string' ? block.text : '')).join('');
  return '';
}

function lastUserMessage(body: StubRequestBody): string {
  const users = (body.messages ?? []).filter((message) => message.role === 'user');
  return textOf(users[users.length - 1]?.content);
}

function countWords(body: StubRequestBody): number {
  const texts = [textOf(body.system), ...(body.messages ?? []).map((message) => textOf(message.content))];
  return texts.join(' ').split(/\s+/).filter(Boolean).length;
}

/** Three non-empty pieces, never splitting a character. */
function splitInThree(text: string): string[] {
  const characters = Array.from(text);
  const size = Math.ceil(characters.length / 3);
  return [0, 1, 2].map((index) => characters.slice(index * size, (index + 1) * size).join('')).filter(Boolean);
}
