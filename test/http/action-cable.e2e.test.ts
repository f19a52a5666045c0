import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { unauthenticated } from '../../src/errors';
import { formatError } from '../../src/graphql/plugins';
import { createActionCableServer, type ActionCableServer } from '../../src/http/action-cable';
import {
  createLspCable,
  openRawCable,
  subscribeLikeLsp,
  waitFor,
  type CableFrame,
  type OpenRawCableOptions,
  type RawCable,
} from '../helpers/cable-clients';
import {
  CABLE_TOKENS,
  createCableTestSchema,
  TICK_SUBSCRIPTION,
  tickTopic,
  type CableTestContext,
  type CableTestSchema,
} from '../helpers/cable-schema';

type Harness = CableTestSchema & {
  url: string;
  cable: ActionCableServer;
  /** Every log line, parsed, debug included. */
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
};

async function startHarness(options: { pingIntervalMs?: number } = {}): Promise<Harness> {
  const testSchema = createCableTestSchema();
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  const cable = createActionCableServer<string>({
    schema: testSchema.schema,
    authenticate: async (request) => {
      const header = request.headers.authorization;
      if (!header) return null;
      const user = CABLE_TOKENS[header.replace(/^Bearer /, '')];
      if (!user) throw unauthenticated();
      return user;
    },
    createContext: (user): CableTestContext => ({ user }),
    logger,
    formatError,
    pingIntervalMs: options.pingIntervalMs ?? 60_000,
  });
  const server = http.createServer((_request, response) => response.writeHead(404).end());
  server.on('upgrade', (request, socket, head) => {
    if (request.url === '/-/cable') cable.handleUpgrade(request, socket, head);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...testSchema,
    url: `ws://127.0.0.1:${port}/-/cable`,
    cable,
    logs,
    close: async () => {
      await cable.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let harness: Harness;
const cleanups: Array<() => unknown> = [];

beforeEach(async () => {
  harness = await startHarness();
});

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  await harness.close();
});

async function rawCable(options: OpenRawCableOptions = { token: 'good' }): Promise<RawCable> {
  const client = await openRawCable(harness.url, options);
  cleanups.push(() => client.close());
  return client;
}

async function lspCable(token?: string) {
  const cable = await createLspCable(harness.url, token);
  cleanups.push(() => cable.disconnect());
  return cable;
}

const graphqlIdentifier = (params: Record<string, unknown>) => JSON.stringify({ channel: 'GraphqlChannel', ...params });
const tickIdentifier = (userId: string) =>
  graphqlIdentifier({ query: TICK_SUBSCRIPTION, variables: JSON.stringify({ userId }), operationName: 'tick' });
const helloIdentifier = (tag = '') =>
  graphqlIdentifier({ query: `query hello${tag} { hello }`, variables: '{}', operationName: `hello${tag}` });

/** Subscribes on a raw cable and takes frames up to the answer (confirm, then the first message). */
async function subscribeRaw(client: RawCable, identifier: string): Promise<CableFrame[]> {
  client.send({ command: 'subscribe', identifier });
  return [await client.take(), await client.take()];
}

// Frames are sent in order: once a later query is answered, anything an earlier event caused has arrived.
async function barrier(client: RawCable, tag: string): Promise<void> {
  await subscribeRaw(client, helloIdentifier(tag));
}

describe('connection', () => {
  it('welcomes an authenticated client on actioncable-v1-json, then pings every pingIntervalMs in unix seconds', async () => {
    await harness.close();
    harness = await startHarness({ pingIntervalMs: 30 });
    const client = await rawCable();

    expect(client.socket.protocol).toBe('actioncable-v1-json');
    expect(await client.take({ pings: true })).toEqual({ type: 'welcome' });
    const ping = await client.take({ pings: true });
    expect(ping).toEqual({ type: 'ping', message: expect.any(Number) });
    expect(Math.abs((ping.message as number) - Date.now() / 1000)).toBeLessThan(5);
    expect(await client.take({ pings: true })).toMatchObject({ type: 'ping' });
    expect(harness.logs).toContainEqual(expect.objectContaining({ event: 'cable_connected' }));
  });

  it.each([
    ['no token', undefined],
    ['a bad token', 'stolen'],
  ])('rejects a connection with %s: unauthorized, no reconnect, closed', async (_case, token) => {
    const client = await rawCable({ token });

    expect(await client.take()).toEqual({ type: 'disconnect', reason: 'unauthorized', reconnect: false });
    await client.closed;
    expect(client.frames).toHaveLength(1);
    expect(harness.logs).toContainEqual(expect.objectContaining({ event: 'cable_rejected' }));
  });

  it("rejects the language server's client without a token so that it does not reconnect", async () => {
    const cable = await lspCable();

    await expect(cable.connect()).rejects.toMatchObject({ reason: 'unauthorized' });
    expect(cable.state).toBe('closed');
  });

  it('refuses an upgrade offering only other subprotocols with HTTP 400, and accepts one offering none', async () => {
    await expect(openRawCable(harness.url, { token: 'good', protocols: ['graphql-transport-ws'] })).rejects.toThrow(
      'Unexpected server response: 400',
    );

    const client = await rawCable({ token: 'good', protocols: [] });
    expect(await client.take()).toEqual({ type: 'welcome' });
  });

  it('never logs the token or query variables', async () => {
    const client = await rawCable();
    await client.take();
    await subscribeRaw(
      client,
      graphqlIdentifier({ query: 'query secretive($s: String) { hello }', variables: JSON.stringify({ s: 'secret-variable' }) }),
    );

    const logged = JSON.stringify(harness.logs);
    expect(logged).toContain('cable_subscribed');
    expect(logged).not.toContain('good');
    expect(logged).not.toContain('secret-variable');
  });
});

describe("GraphqlChannel through the language server's client", () => {
  it('confirms a subscription, sends the initial null result, then each event in order with more: true', async () => {
    const cable = await lspCable('good');
    await cable.connect();
    const { messages } = await subscribeLikeLsp(cable, { query: TICK_SUBSCRIPTION, variables: { userId: 'alice' }, operationName: 'tick' });
    await waitFor(() => harness.ticks.listenerCount(tickTopic('alice')) === 1);

    for (const n of [1, 2, 3]) harness.ticks.emit(tickTopic('alice'), n);
    await waitFor(() => messages.length === 4);

    expect(messages).toEqual([
      { result: { data: { tick: null } }, more: true },
      { result: { data: { tick: 1 } }, more: true },
      { result: { data: { tick: 2 } }, more: true },
      { result: { data: { tick: 3 } }, more: true },
    ]);
  });

  it("answers a subscription to another user's events with a FORBIDDEN error, more: false, and nothing after", async () => {
    const cable = await lspCable('good');
    await cable.connect();
    const { messages } = await subscribeLikeLsp(cable, { query: TICK_SUBSCRIPTION, variables: { userId: 'bob' }, operationName: 'tick' });
    await waitFor(() => messages.length === 1);

    harness.ticks.emit(tickTopic('bob'), 1);
    const hello = await subscribeLikeLsp(cable, { query: '{ hello }', variables: {}, operationName: '' });
    await waitFor(() => hello.messages.length === 1);

    expect(messages).toEqual([
      {
        result: {
          errors: [
            expect.objectContaining({ message: 'You cannot subscribe to another user', path: ['tick'], extensions: { code: 'FORBIDDEN' } }),
          ],
        },
        more: false,
      },
    ]);
    expect(harness.ticks.listenerCount(tickTopic('bob'))).toBe(0);
  });

  it('executes a query once and answers with more: false', async () => {
    const cable = await lspCable('good');
    await cable.connect();
    const { messages } = await subscribeLikeLsp(cable, { query: 'query hello { hello }', variables: {}, operationName: 'hello' });

    await waitFor(() => messages.length === 1);
    expect(messages).toEqual([{ result: { data: { hello: 'hello alice' } }, more: false }]);
  });

  it('masks an unexpected resolver error and logs the original', async () => {
    const cable = await lspCable('good');
    await cable.connect();
    const { messages } = await subscribeLikeLsp(cable, { query: 'query boom { boom }', variables: {}, operationName: 'boom' });

    await waitFor(() => messages.length === 1);
    expect(messages).toEqual([
      {
        result: {
          data: { boom: null },
          errors: [expect.objectContaining({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } })],
        },
        more: false,
      },
    ]);
    expect(JSON.stringify(messages)).not.toContain('db-internal');
    expect(harness.logs).toContainEqual(expect.objectContaining({ event: 'cable_operation_error', level: 50 }));
  });
});

describe('GraphqlChannel frames', () => {
  it('echoes the identifier byte for byte in every frame', async () => {
    const client = await rawCable();
    await client.take();
    // Odd spacing, key order and escapes: re-serialising it would change it.
    const identifier = `{ "query" : "subscription { tick(userId: \\"alice\\") }",\n"channel":"GraphqlChannel", "note": "caf\\u00e9" }`;

    const [confirm, initial] = await subscribeRaw(client, identifier);
    await waitFor(() => harness.ticks.listenerCount(tickTopic('alice')) === 1);
    harness.ticks.emit(tickTopic('alice'), 7);
    const event = await client.take();

    expect(confirm).toEqual({ identifier, type: 'confirm_subscription' });
    expect(initial).toEqual({ identifier, message: { result: { data: { tick: null } }, more: true } });
    expect(event).toEqual({ identifier, message: { result: { data: { tick: 7 } }, more: true } });
  });

  it.each([
    ['a syntax error', { query: 'subscription {' }, 'GRAPHQL_PARSE_FAILED', /^Syntax Error/],
    ['an unknown field', { query: '{ goodbye }' }, 'GRAPHQL_VALIDATION_FAILED', /Cannot query field "goodbye"/],
    ['variables that are not JSON', { query: TICK_SUBSCRIPTION, variables: '{userId:' }, 'BAD_USER_INPUT', /^Variables are not valid JSON/],
    [
      'a missing required variable',
      { query: TICK_SUBSCRIPTION, variables: '{}' },
      'BAD_USER_INPUT',
      /"\$userId" of required type "String!" was not provided/,
    ],
    [
      'an unknown operation name',
      { query: TICK_SUBSCRIPTION, operationName: 'tock' },
      'OPERATION_RESOLUTION_FAILURE',
      /Unknown operation named "tock"/,
    ],
    ['no query', {}, 'BAD_REQUEST', /No query string was present/],
  ])('confirms, then answers %s with errors and more: false', async (_case, params, code, message) => {
    const client = await rawCable();
    await client.take();
    const identifier = graphqlIdentifier(params);

    const [confirm, answer] = await subscribeRaw(client, identifier);

    expect(confirm).toEqual({ identifier, type: 'confirm_subscription' });
    expect(answer).toEqual({
      identifier,
      message: {
        result: {
          errors: [expect.objectContaining({ message: expect.stringMatching(message), extensions: expect.objectContaining({ code }) })],
        },
        more: false,
      },
    });
  });

  it('accepts variables as an object too', async () => {
    const client = await rawCable();
    await client.take();

    const [, answer] = await subscribeRaw(client, graphqlIdentifier({ query: TICK_SUBSCRIPTION, variables: { userId: 'alice' } }));

    expect(answer).toMatchObject({ message: { result: { data: { tick: null } }, more: true } });
  });

  it('rejects a subscription to an unknown channel', async () => {
    const client = await rawCable();
    await client.take();
    const identifier = JSON.stringify({ channel: 'NotesChannel', noteable_id: 1 });

    client.send({ command: 'subscribe', identifier });

    expect(await client.take()).toEqual({ identifier, type: 'reject_subscription' });
  });

  it('stops the iterator on unsubscribe and sends nothing more for it', async () => {
    const client = await rawCable();
    await client.take();
    const identifier = tickIdentifier('alice');
    await subscribeRaw(client, identifier);
    await waitFor(() => harness.ticks.listenerCount(tickTopic('alice')) === 1);

    client.send({ command: 'unsubscribe', identifier });
    await barrier(client, 'AfterUnsubscribe');
    // An async generator parked on an await runs its finally when it next wakes.
    harness.ticks.emit(tickTopic('alice'), 1);
    await waitFor(() => harness.finished.includes('alice'));
    await barrier(client, 'AfterEvent');

    expect(client.frames.filter((frame) => frame.identifier === identifier)).toHaveLength(2);
    expect(harness.ticks.listenerCount(tickTopic('alice'))).toBe(0);
  });

  it('ignores a second subscribe with the same identifier', async () => {
    const client = await rawCable();
    await client.take();
    const identifier = tickIdentifier('alice');
    await subscribeRaw(client, identifier);

    client.send({ command: 'subscribe', identifier });
    await barrier(client, 'AfterDuplicate');
    await waitFor(() => harness.ticks.listenerCount(tickTopic('alice')) === 1);
    harness.ticks.emit(tickTopic('alice'), 5);
    await client.take();
    await barrier(client, 'AfterEvent');

    expect(client.frames.filter((frame) => frame.identifier === identifier)).toEqual([
      { identifier, type: 'confirm_subscription' },
      { identifier, message: { result: { data: { tick: null } }, more: true } },
      { identifier, message: { result: { data: { tick: 5 } }, more: true } },
    ]);
  });

  it('ignores frames that are not JSON, binary, unknown commands, and messages, and keeps serving', async () => {
    const client = await rawCable();
    await client.take();

    client.send('not json');
    client.socket.send(Buffer.from([1, 2, 3]), { binary: true });
    client.send({ command: 'dance', identifier: '{}' });
    client.send({ command: 'subscribe', identifier: 'not json either' });
    client.send({ command: 'message', identifier: helloIdentifier(), data: JSON.stringify({ action: 'execute' }) });
    const [, answer] = await subscribeRaw(client, helloIdentifier());

    expect(answer).toMatchObject({ message: { result: { data: { hello: 'hello alice' } }, more: false } });
    expect(harness.logs).toContainEqual(expect.objectContaining({ event: 'cable_frame_ignored', reason: 'malformed' }));
    expect(harness.logs).toContainEqual(expect.objectContaining({ event: 'cable_frame_ignored', reason: 'malformed_identifier' }));
    expect(harness.logs).toContainEqual(expect.objectContaining({ event: 'cable_frame_ignored', reason: 'unsupported_command' }));
  });

  it('handles a subscribe sent before the welcome, once authenticated', async () => {
    const client = await openRawCable(harness.url, { token: 'good' });
    cleanups.push(() => client.close());
    client.send({ command: 'subscribe', identifier: helloIdentifier() });

    expect(await client.take()).toEqual({ type: 'welcome' });
    expect(await client.take()).toMatchObject({ type: 'confirm_subscription' });
  });

  it('stops every iterator of a connection when its socket closes', async () => {
    const client = await rawCable();
    await client.take();
    await subscribeRaw(client, tickIdentifier('alice'));
    await waitFor(() => harness.ticks.listenerCount(tickTopic('alice')) === 1);

    await client.close();
    await waitFor(() => harness.logs.some((line) => line.event === 'cable_disconnected'));
    harness.ticks.emit(tickTopic('alice'), 1);

    await waitFor(() => harness.finished.includes('alice'));
    expect(harness.ticks.listenerCount(tickTopic('alice'))).toBe(0);
  });

  it('close() tells clients to reconnect later, closes them and stops their iterators', async () => {
    const client = await rawCable();
    await client.take();
    await subscribeRaw(client, tickIdentifier('alice'));

    await harness.cable.close();

    expect(await client.take()).toEqual({ type: 'disconnect', reason: 'server_restart', reconnect: true });
    expect(await client.closed).toBe(1001);
    harness.ticks.emit(tickTopic('alice'), 1);
    await waitFor(() => harness.finished.includes('alice'));
    await expect(openRawCable(harness.url, { token: 'good' })).rejects.toThrow('Unexpected server response: 503');
  });
});
