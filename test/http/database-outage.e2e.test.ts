import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import WebSocket from 'ws';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LSP_CHAT_MUTATION, wsClient } from '../helpers/chat-client';
import { openRawCable } from '../helpers/cable-clients';
import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startFreezableProxy, type FreezableProxy } from '../helpers/freezable-proxy';
import { parseScrape, valueOf } from '../helpers/prometheus';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database';
import { startTestService, type TestService } from '../helpers/test-service';
import { sleep, waitUntil } from '../helpers/wait';

const TIMEOUT_MS = 1_000;
// The timeout, and room for a busy machine: a request that waited for the database would take far longer (for ever).
const ANSWERED_WITHIN_MS = 5_000;
const UNAVAILABLE = 'Temporarily unavailable: the database did not answer. Try again shortly.';

// The service (API and worker processes apart, as deployed) reaches PostgreSQL through a proxy of this file's own,
// which can stop passing bytes (a hung server or a network that drops everything: connections stay open, nothing
// comes back) and then refuse connections.
describe('a database that stops answering', () => {
  let database: TestDatabase;
  let proxy: FreezableProxy;
  let service: TestService;
  let worker: TestService;
  let alice: UserWithToken;
  let bob: UserWithToken;
  /** The test database's URL through the proxy. */
  let viaProxy: URL;

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    viaProxy = new URL(database.url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    service = await startTestService({
      // A long auth cache: alice's token is known from before the database stops; bob's never was.
      env: {
        DATABASE_URL: viaProxy.toString(),
        DATABASE_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS),
        AUTH_CACHE_MS: '60000',
        METRICS_ALLOWED_CIDRS: '127.0.0.1/32, ::1',
      },
    });
    worker = await startTestService({ role: 'worker', env: { DATABASE_URL: viaProxy.toString() } });
    alice = await userWithToken(service.prisma);
    bob = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: alice.username });
  });
  afterAll(async () => {
    proxy?.thaw();
    await worker?.close().catch(() => undefined);
    await service?.close().catch(() => undefined);
    await proxy?.close();
    await database?.drop();
  });

  const chat = (question: string) =>
    service.graphql<{ aiAction: { requestId: string; errors: string[] } | null }>(LSP_CHAT_MUTATION, {
      token: alice.token,
      variables: { question, resourceId: null, currentFileContext: null, platformOrigin: 'language_server' },
    });
  // A new thread is made with its first message in one transaction: a connection checked out of the pool.
  const chatInNewThread = (question: string) =>
    service.graphql<{ aiAction: { requestId: string; threadId: string | null; errors: string[] } | null }>(
      'mutation($q: String!) { aiAction(input: { chat: { content: $q }, conversationType: DUO_CHAT }) { requestId threadId errors } }',
      { token: alice.token, variables: { q: question } },
    );
  const timed = async <T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> => {
    const started = Date.now();
    const value = await work();
    return { value, ms: Date.now() - started };
  };

  it('answers each transport with SERVICE_UNAVAILABLE (HTTP 503) within the timeout, lets jobs wait, and recovers', async () => {
    expect((await chat('How do I parse a URL?')).body.data?.aiAction?.errors).toEqual([]);
    const mcp = new Client({ name: 'duo-slice-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/api/v4/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${alice.token}` } },
      }),
    );
    proxy.freeze();
    let outside: Promise<unknown>;
    try {
      // A job's statement (the worker process's) has no such limit: it waits for the database.
      outside = worker.prisma.$queryRaw`SELECT 1 AS one`;
      // What needs no database is served.
      expect((await service.graphql('{ currentUser { username } }', { token: alice.token })).body).toEqual({
        data: { currentUser: { username: alice.username } },
      });
      const [mutation, transaction, tool, rest, graphqlWs, graphqlWsConnect, cable] = await Promise.all([
        timed(() => chat('Asked while the database was away')),
        timed(() => chatInNewThread('A new thread while the database was away')),
        timed(() => mcp.callTool({ name: 'get_code_index_status', arguments: { project_id: 'nowhere/nothing' } })),
        timed(async () => {
          const response = await fetch(`${service.url}/api/v4/user`, { headers: { authorization: `Bearer ${alice.token}` } });
          return { status: response.status, body: await response.json() };
        }),
        timed(async () => {
          const client = wsClient(service.url, alice.token);
          try {
            return await new Promise<unknown>((resolve, reject) =>
              client.subscribe(
                { query: '{ aiMessages { nodes { content } } }' },
                { next: resolve, error: reject, complete: () => undefined },
              ),
            );
          } finally {
            await client.dispose();
          }
        }),
        timed(async () => {
          // bob's token was never looked up: connecting needs the database. Closed with 1011, which graphql-ws
          // clients retry (its 4500 and 4403 they do not).
          const socket = new WebSocket(`${service.url.replace(/^http/, 'ws')}/api/graphql`, 'graphql-transport-ws');
          await new Promise((resolve) => socket.once('open', resolve));
          socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${bob.token}` } }));
          return new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
        }),
        timed(async () => {
          // bob's token was never looked up: connecting needs the database.
          const socket = await openRawCable(`${service.url.replace(/^http/, 'ws')}/-/cable`, { token: bob.token });
          const code = await socket.closed;
          return { code, frames: socket.frames.filter((frame) => frame.type !== 'ping') };
        }),
      ]);
      for (const { value } of [mutation, transaction])
        expect(value.body.errors?.[0]).toMatchObject({ message: UNAVAILABLE, extensions: { code: 'SERVICE_UNAVAILABLE' } });
      expect(tool.value).toMatchObject({ isError: true, content: [{ type: 'text', text: `Tool execution failed: ${UNAVAILABLE}` }] });
      expect(rest.value).toEqual({ status: 503, body: { message: UNAVAILABLE } });
      expect(graphqlWs.value).toMatchObject({ errors: [{ message: UNAVAILABLE, extensions: { code: 'SERVICE_UNAVAILABLE' } }] });
      // Not "unauthorized, do not reconnect": the client comes back later, as from Rails after an error while connecting.
      expect(cable.value).toEqual({ code: 1011, frames: [] });
      expect(graphqlWsConnect.value).toBe(1011);
      for (const { ms } of [mutation, transaction, tool, rest, graphqlWs, graphqlWsConnect, cable])
        expect(ms).toBeLessThan(ANSWERED_WITHIN_MS);
      // Those ran out of time: from now on the requests' statements are refused unsent, each request at once.
      const scrape = async () => parseScrape(await (await fetch(`${service.url}/-/metrics`)).text());
      expect(valueOf(await scrape(), 'duo_database_answering')).toBe(0);
      const refusedBefore = valueOf(await scrape(), 'duo_database_statements_refused_total');
      for (let index = 0; index < 3; index += 1) {
        const response = await fetch(`${service.url}/api/v4/user`, { headers: { authorization: `Bearer ${alice.token}` } });
        expect({ status: response.status, body: await response.json() }).toEqual({ status: 503, body: { message: UNAVAILABLE } });
      }
      expect(valueOf(await scrape(), 'duo_database_statements_refused_total')).toBeGreaterThanOrEqual(refusedBefore + 3);
      // Longer than the request timeout: the job's statement is still waiting, not failed.
      await sleep(2 * TIMEOUT_MS);
    } finally {
      proxy.thaw();
      await mcp.close();
    }
    await waitUntil(
      async () => valueOf(parseScrape(await (await fetch(`${service.url}/-/metrics`)).text()), 'duo_database_answering') === 1,
      {
        what: 'the probe to find the database answering',
        timeoutMs: 10_000,
        intervalMs: 50,
      },
    );
    expect(await outside).toEqual([{ one: 1 }]);
    // The connections whose statements timed out were closed, not handed out again: every request works at once.
    await waitUntil(async () => (await chat('And now?')).body.data?.aiAction?.errors?.length === 0, {
      what: 'aiAction to work again',
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    expect((await chatInNewThread('A new thread, now')).body.data?.aiAction).toMatchObject({ errors: [], threadId: expect.any(String) });
    const users = await Promise.all(
      Array.from({ length: 12 }, () => fetch(`${service.url}/api/v4/user`, { headers: { authorization: `Bearer ${alice.token}` } })),
    );
    expect(users.map((response) => response.status)).toEqual(Array.from({ length: 12 }, () => 200));
  }, 30_000);

  it('does the same in one process running the API and the workers, whose jobs wait on a pool of their own', async () => {
    const allInOne = await startTestService({
      role: 'all',
      env: { DATABASE_URL: viaProxy.toString(), DATABASE_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) },
    });
    try {
      expect(allInOne.running.database.jobPrisma).not.toBe(allInOne.prisma);
      proxy.freeze();
      let job: Promise<unknown>;
      try {
        job = allInOne.running.database.jobPrisma.$queryRaw`SELECT 1 AS one`;
        const { value, ms } = await timed(() => allInOne.graphql('{ aiMessages { nodes { content } } }', { token: alice.token }));
        expect(value.body.errors?.[0]).toMatchObject({ message: UNAVAILABLE, extensions: { code: 'SERVICE_UNAVAILABLE' } });
        expect(ms).toBeLessThan(ANSWERED_WITHIN_MS);
        await sleep(2 * TIMEOUT_MS);
      } finally {
        proxy.thaw();
      }
      expect(await job).toEqual([{ one: 1 }]);
    } finally {
      await allInOne.close();
    }
  }, 30_000);

  it('answers SERVICE_UNAVAILABLE at once while the database refuses connections', async () => {
    await proxy.close();
    const { value, ms } = await timed(() => chat('Asked while the database refused connections'));
    expect(value.body.errors?.[0]).toMatchObject({ message: UNAVAILABLE, extensions: { code: 'SERVICE_UNAVAILABLE' } });
    expect(ms).toBeLessThan(TIMEOUT_MS);
  }, 30_000);
});
