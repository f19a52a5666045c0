import { createClient } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { revokeToken, setUserState } from '../../src/users/users.service';
import { userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';
import { openCable, overCable, overGraphqlWs, overHttp, type Operation, type TransportResult } from './transports';

const ME = `query { currentUser { id } }`;
const RESPONSES = `subscription($userId: UserID) { aiCompletionResponse(userId: $userId, aiAction: CHAT) { requestId } }`;
const aliases = (count: number) =>
  `query { ${Array.from({ length: count }, (_, index) => `p${index}: project(fullPath: "a/b") { id }`).join(' ')} }`;

/** A graphql-ws connection kept open, to send operations one after another on the same socket. */
function openWs(url: string, token: string | null) {
  let closeCode: number | null = null;
  const client = createClient({
    url: `${url.replace(/^http/, 'ws')}/api/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: token ? { Authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: false,
    on: { closed: (event) => (closeCode = (event as { code: number }).code) },
  });
  const run = (query: string, variables: Record<string, unknown> = {}) =>
    new Promise<TransportResult | { closed: true }>((resolve) => {
      client.subscribe(
        { query, variables },
        {
          next: (result) => resolve(result as TransportResult),
          error: (error) => resolve(Array.isArray(error) ? { errors: error } : { closed: true }),
          complete: () => undefined,
        },
      );
    });
  return { client, run, closeCode: () => closeCode };
}

async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${check.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// Threat: the sockets as a way around what HTTP enforces. A token that stops being valid closes the
// socket; cost, depth, rate and size limits hold on graphql-ws and ActionCable as on POST.
describe('sockets: re-authentication and the same limits as HTTP', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({
      env: { SOCKET_REAUTH_INTERVAL_MS: '300', WS_MAX_MESSAGE_BYTES: '200000', WS_MAX_SUBSCRIPTIONS_PER_USER: '2', AUTH_CACHE_MS: '500' },
    });
  });
  afterAll(() => service.close());

  const invalidations: Array<[string, (user: UserWithToken) => Promise<unknown>]> = [
    ['revoked', (user) => service.prisma.personalAccessToken.updateMany({ where: { userId: user.id }, data: { revokedAt: new Date() } })],
    [
      'expired',
      (user) => service.prisma.personalAccessToken.updateMany({ where: { userId: user.id }, data: { expiresAt: new Date('2020-01-01') } }),
    ],
    ['blocked user', (user) => service.prisma.user.update({ where: { id: user.id }, data: { state: 'blocked' } })],
  ];

  describe.each(invalidations)('a %s token (case 2)', (_name, invalidate) => {
    it('graphql-ws: the next operation closes the socket (4403)', async () => {
      const user = await userWithToken(service.prisma);
      const ws = openWs(service.url, user.token);
      expect(await ws.run(ME)).toMatchObject({ data: { currentUser: { id: `gid://gitlab/User/${user.id}` } } });
      await invalidate(user);
      await eventually(async () => 'closed' in (await ws.run(ME)) || ws.closeCode() !== null);
      await eventually(() => ws.closeCode() === 4403);
      await ws.client.dispose();
    });

    it('graphql-ws: an idle socket holding a subscription is closed too', async () => {
      const user = await userWithToken(service.prisma);
      const ws = openWs(service.url, user.token);
      void ws.run(RESPONSES, { userId: `gid://gitlab/User/${user.id}` });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await invalidate(user);
      await eventually(() => ws.closeCode() === 4403);
      await ws.client.dispose();
    });

    it('ActionCable: the next subscribe disconnects as unauthorized, and an idle connection is closed', async () => {
      const user = await userWithToken(service.prisma);
      const cable = await openCable(service.url, user.token);
      expect(await overCable(service.url, { query: ME, cable })).toMatchObject({
        data: { currentUser: { id: `gid://gitlab/User/${user.id}` } },
      });
      const idle = await openCable(service.url, user.token);
      await invalidate(user);
      // Changed behind the service's back (as an admin command does): it notices once its token cache (AUTH_CACHE_MS) lets go.
      await new Promise((resolve) => setTimeout(resolve, service.running.services.config.authCacheMs + 100));
      const next = await overCable(service.url, { query: ME, cable }).catch(() => ({
        errors: [{ message: 'closed', extensions: { code: 'unauthorized' } }],
      }));
      expect(next.errors?.[0]?.extensions?.code).toBe('unauthorized');
      await cable.closed;
      await idle.closed;
      expect(idle.frames.some((frame) => frame.type === 'disconnect' && frame.reason === 'unauthorized' && frame.reconnect === false)).toBe(
        true,
      );
    });
  });

  it('graphql-ws: a socket closed while its token is still being checked keeps no re-check running', async () => {
    const user = await userWithToken(service.prisma);
    const token = await service.prisma.personalAccessToken.findFirstOrThrow({ where: { userId: user.id } });
    const reauthMs = service.running.services.config.socketReauthIntervalMs;
    // The token's first use writes its last_used_at; a row lock held here holds the check there.
    const locker = new pg.Client({ connectionString: service.running.services.config.databaseUrl });
    await locker.connect();
    const setSpy = jest.spyOn(global, 'setInterval');
    const clearSpy = jest.spyOn(global, 'clearInterval');
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM personal_access_tokens WHERE id = $1 FOR UPDATE', [token.id]);
      const socket = new WebSocket(`${service.url.replace(/^http/, 'ws')}/api/graphql`, 'graphql-transport-ws');
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${user.token}` } }));
      // Waiting for the lock: the write of last_used_at (pg_stat_activity may still show its previous statement).
      await eventually(async () => {
        const { rows } = await locker.query(
          "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'",
        );
        return rows.length > 0;
      });
      socket.close();
      await new Promise((resolve) => socket.once('close', resolve));
      await new Promise((resolve) => setTimeout(resolve, 100));
      await locker.query('COMMIT');
      // The check ends after the socket did; give the connection's start its turn.
      await eventually(
        async () => (await service.prisma.personalAccessToken.findUniqueOrThrow({ where: { id: token.id } })).lastUsedAt !== null,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = setSpy.mock.calls.flatMap((call, index) => (call[1] === reauthMs ? [setSpy.mock.results[index].value] : []));
      const cleared = new Set(clearSpy.mock.calls.map((call) => call[0]));
      expect(started.filter((handle) => !cleared.has(handle))).toEqual([]);
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  });

  const transports: Array<[string, (operation: Operation) => Promise<TransportResult>]> = [
    ['POST /api/graphql', (operation) => overHttp(service.url, operation)],
    ['graphql-ws', (operation) => overGraphqlWs(service.url, operation)],
    ['ActionCable', (operation) => overCable(service.url, operation)],
  ];

  describe.each(transports)('cost limits over %s (case 3)', (name, send) => {
    it('2,000 aliases are refused while parsing, before validation can stall the process', async () => {
      const user = await userWithToken(service.prisma);
      const started = Date.now();
      const result = await send({ query: aliases(2000), token: user.token });
      expect(result.errors?.[0]?.message).toMatch(/more th.. 5000 tokens/);
      expect(result.data ?? null).toBeNull();
      // A loose bound: the point is that nothing ran the 2,000 fields, not a timing.
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('300 aliases of project are over the cost limit (anonymous too, where the transport allows it)', async () => {
      const user = await userWithToken(service.prisma);
      const tokens = name === 'ActionCable' ? [user.token] : [user.token, null];
      for (const token of tokens) {
        const result = await send({ query: aliases(300), token });
        expect(result.errors?.[0]?.message).toMatch(/exceeds max complexity/);
        expect(result.data ?? null).toBeNull();
      }
    });

    it('depth over GRAPHQL_MAX_DEPTH is refused', async () => {
      const user = await userWithToken(service.prisma);
      const deep = `query { currentUser { id } }`;
      const tooDeep = `query { __schema { types { fields { type { ${'ofType { '.repeat(14)}name${' }'.repeat(18)} }`;
      expect((await send({ query: deep, token: user.token })).errors).toBeUndefined();
      const result = await send({ query: tooDeep, token: user.token });
      expect(result.errors?.[0]?.message).toMatch(/exceeds max depth/);
    });
  });

  it('graphql-ws and ActionCable refuse a frame over WS_MAX_MESSAGE_BYTES by closing (1009)', async () => {
    const user = await userWithToken(service.prisma);
    const big = `query { currentUser { id } } # ${'x'.repeat(210_000)}`;
    const ws = openWs(service.url, user.token);
    expect(await ws.run(ME)).toMatchObject({ data: { currentUser: expect.anything() } });
    void ws.run(big);
    await eventually(() => ws.closeCode() === 1009);
    await ws.client.dispose();
    const cable = await openCable(service.url, user.token);
    cable.send({ command: 'subscribe', identifier: JSON.stringify({ channel: 'GraphqlChannel', query: big, variables: '{}' }) });
    expect(await cable.closed).toBe(1009);
  });

  it('open subscriptions per user are limited across graphql-ws and ActionCable', async () => {
    const user = await userWithToken(service.prisma);
    const variables = { userId: `gid://gitlab/User/${user.id}` };
    const ws = openWs(service.url, user.token);
    void ws.run(RESPONSES, variables);
    const cable = await openCable(service.url, user.token);
    cable.send({
      command: 'subscribe',
      identifier: JSON.stringify({ channel: 'GraphqlChannel', query: RESPONSES, variables: JSON.stringify(variables), nonce: 1 }),
    });
    await eventually(() => cable.frames.some((frame) => (frame.message as { more?: boolean } | undefined)?.more === true));
    // Two are open (the limit): a third is refused on either transport.
    const third = await ws.run(RESPONSES, variables);
    expect((third as TransportResult).errors?.[0]).toMatchObject({
      message: expect.stringContaining('Too many open subscriptions'),
      extensions: { code: 'RATE_LIMITED' },
    });
    const fourth = await overCable(service.url, { query: RESPONSES, variables, cable });
    expect(fourth.errors?.[0]).toMatchObject({ message: expect.stringContaining('Too many open subscriptions') });
    // Closing one frees its slot.
    await cable.close();
    await eventually(async () => {
      const again = await Promise.race([
        ws.run(RESPONSES, variables),
        new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), 300)),
      ]);
      return again === 'open';
    });
    await ws.client.dispose();
  });

  it('graphql-ws: an id completed and reused while its first Subscribe is checked leaves no subscription behind', async () => {
    const user = await userWithToken(service.prisma);
    const variables = { userId: `gid://gitlab/User/${user.id}` };
    const socket = new WebSocket(`${service.url.replace(/^http/, 'ws')}/api/graphql`, 'graphql-transport-ws');
    const frames: Array<{ type: string; id?: string; payload?: unknown }> = [];
    socket.on('message', (data) => frames.push(JSON.parse((data as Buffer).toString('utf8'))));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${user.token}` } }));
    await eventually(() => frames.some((frame) => frame.type === 'connection_ack'));
    // Three frames at once: the first Subscribe is still being checked when the other two arrive.
    const subscribe = JSON.stringify({ id: 'a', type: 'subscribe', payload: { query: RESPONSES, variables } });
    socket.send(subscribe);
    socket.send(JSON.stringify({ id: 'a', type: 'complete' }));
    socket.send(subscribe);
    // Time for all three to be handled (the second Subscribe is refused as a duplicate here).
    await new Promise((resolve) => setTimeout(resolve, 500));
    socket.close();
    await new Promise((resolve) => socket.once('close', resolve));
    // Every slot of the user is free again: the limit's two subscriptions open, and the third is refused.
    const ws = openWs(service.url, user.token);
    const opened = () =>
      Promise.race([ws.run(RESPONSES, variables), new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), 500))]);
    await eventually(async () => (await opened()) === 'open');
    expect(await opened()).toBe('open');
    expect(((await opened()) as TransportResult).errors?.[0]).toMatchObject({ extensions: { code: 'RATE_LIMITED' } });
    await ws.client.dispose();
  });
});

describe("sockets: no event reaches a token that no longer holds, whatever the re-check's interval", () => {
  let service: TestService;
  beforeAll(async () => {
    // The default interval (30 s): the periodic re-check would come far too late; each event is checked itself.
    service = await startTestService();
  });
  afterAll(() => service.close());

  const SECRET = 'SECRET answer from repository code';
  const publish = (user: UserWithToken, requestId: string) =>
    service.running.services.chatEvents.publish(user.id, {
      message: {
        id: null,
        requestId,
        role: 'assistant',
        content: `${SECRET} ${requestId}`,
        timestamp: new Date().toISOString(),
        chunkId: 1,
        errors: [],
        extras: {},
        threadId: null,
        agentVersionId: null,
        contextItems: [],
      },
      topics: [{ userId: `gid://gitlab/User/${user.id}`, aiAction: 'chat' }],
    });
  const invalidations: Array<[string, (user: UserWithToken) => Promise<unknown>]> = [
    ['revoked', (user) => revokeToken(service.prisma, { token: user.token })],
    ['blocked', (user) => setUserState(service.prisma, user.username, 'blocked')],
  ];

  describe.each(invalidations)('a %s token, changed through the service', (_name, invalidate) => {
    it('graphql-ws: the next event closes the socket (4403) instead of going out', async () => {
      const user = await userWithToken(service.prisma);
      const received: string[] = [];
      let closeCode: number | null = null;
      const client = createClient({
        url: `${service.url.replace(/^http/, 'ws')}/api/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { Authorization: `Bearer ${user.token}` },
        retryAttempts: 0,
        on: { closed: (event) => (closeCode = (event as { code: number }).code) },
      });
      client.subscribe(
        {
          query: `subscription($userId: UserID) { aiCompletionResponse(userId: $userId, aiAction: CHAT) { requestId content } }`,
          variables: { userId: `gid://gitlab/User/${user.id}` },
        },
        {
          next: (result) => {
            const message = (result.data as { aiCompletionResponse: { requestId: string } | null }).aiCompletionResponse;
            if (message) received.push(message.requestId);
          },
          error: () => undefined,
          complete: () => undefined,
        },
      );
      // Subscribed once an event published now arrives.
      await eventually(async () => {
        await publish(user, 'before');
        return received.includes('before');
      });
      await invalidate(user);
      await publish(user, 'after');
      await eventually(() => closeCode === 4403);
      expect(received).not.toContain('after');
      await client.dispose();
    });

    it('ActionCable: the next event disconnects as unauthorized instead of going out', async () => {
      const user = await userWithToken(service.prisma);
      const cable = await openCable(service.url, user.token);
      const identifier = JSON.stringify({
        channel: 'GraphqlChannel',
        query: `subscription($userId: UserID) { aiCompletionResponse(userId: $userId, aiAction: CHAT) { requestId content } }`,
        variables: JSON.stringify({ userId: `gid://gitlab/User/${user.id}` }),
        operationName: null,
      });
      cable.send({ command: 'subscribe', identifier });
      const delivered = () => cable.frames.filter((frame) => JSON.stringify(frame).includes(SECRET)).map((frame) => JSON.stringify(frame));
      await eventually(async () => {
        await publish(user, 'before');
        return delivered().some((frame) => frame.includes('before'));
      });
      await invalidate(user);
      await publish(user, 'after');
      await cable.closed;
      expect(delivered().filter((frame) => frame.includes('after'))).toEqual([]);
      expect(cable.frames.some((frame) => frame.type === 'disconnect' && frame.reason === 'unauthorized')).toBe(true);
    });
  });
});

describe('sockets share the HTTP rate budget (case 3)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '4' } });
  });
  afterAll(() => service.close());

  it('a user already refused over HTTP is refused over graphql-ws and ActionCable too', async () => {
    const user = await userWithToken(service.prisma);
    const statuses: number[] = [];
    for (let index = 0; index < 5; index += 1) statuses.push((await overHttp(service.url, { query: ME, token: user.token })).status!);
    expect(statuses.at(-1)).toBe(429);
    const ws = await overGraphqlWs(service.url, { query: ME, token: user.token });
    expect(ws.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    const cable = await overCable(service.url, { query: ME, token: user.token });
    expect(cable.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
  });

  it('socket operations spend the budget: the fifth one is refused, and HTTP after it', async () => {
    const user = await userWithToken(service.prisma);
    const results: Array<string | undefined> = [];
    for (let index = 0; index < 5; index += 1)
      results.push(
        (await overGraphqlWs(service.url, { query: ME, token: user.token })).errors?.[0]?.extensions?.code as string | undefined,
      );
    expect(results.slice(0, 4)).toEqual([undefined, undefined, undefined, undefined]);
    expect(results[4]).toBe('RATE_LIMITED');
    expect((await overHttp(service.url, { query: ME, token: user.token })).status).toBe(429);
  });

  it('anonymous sockets are limited per address', async () => {
    const results: Array<string | undefined> = [];
    for (let index = 0; index < 6; index += 1)
      results.push(
        (await overGraphqlWs(service.url, { query: `query { project(fullPath: "a/b") { id } }` })).errors?.[0]?.extensions?.code as
          string | undefined,
      );
    expect(results).toContain('RATE_LIMITED');
  });

  it('behind a reverse proxy on the same host, anonymous sockets are limited per forwarded client, as HTTP is', async () => {
    // graphql-ws by hand, with the X-Forwarded-For a local proxy adds on the upgrade request.
    const ask = (client: string) =>
      new Promise<string | null>((resolve, reject) => {
        const socket = new WebSocket(`${service.url.replace(/^http/, 'ws')}/api/graphql`, 'graphql-transport-ws', {
          headers: { 'X-Forwarded-For': client },
        });
        socket.on('error', reject);
        socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: {} })));
        socket.on('message', (data) => {
          const message = JSON.parse((data as Buffer).toString('utf8')) as {
            type: string;
            payload?: Array<{ extensions?: { code?: string } }>;
          };
          if (message.type === 'connection_ack')
            socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'query { project(fullPath: "a/b") { id } }' } }));
          if (message.type === 'next' || message.type === 'error') {
            resolve(message.type === 'error' ? (message.payload?.[0]?.extensions?.code ?? 'error') : null);
            socket.close();
          }
        });
      });
    const first: Array<string | null> = [];
    for (let index = 0; index < 6; index += 1) first.push(await ask('198.51.100.7'));
    expect(first).toContain('RATE_LIMITED');
    // Another client behind the same proxy still has its own budget.
    expect(await ask('198.51.100.8')).toBeNull();
  });
});
