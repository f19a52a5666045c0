import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from 'graphql-ws';
import { wsClient } from '../helpers/chat-client';
import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { runCli } from '../helpers/run-cli';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

type Update = {
  sessionId: string;
  suggestionId: string;
  revision: number;
  intent: string | null;
  generationType: string | null;
  text: string;
  status: string;
  reason: string | null;
};

const SUBSCRIPTION =
  'subscription($sessionId: ID!) { codeSuggestionUpdates(sessionId: $sessionId) { sessionId suggestionId revision intent generationType ' +
  'text status reason } }';
const START = 'mutation($input: CodeSuggestionSessionStartInput!) { codeSuggestionSessionStart(input: $input) { sessionId } }';
const UPDATE = 'mutation($input: CodeSuggestionSessionUpdateInput!) { codeSuggestionSessionUpdate(input: $input) { sessionId revision } }';
const FEEDBACK = 'mutation($input: CodeSuggestionFeedbackInput!) { codeSuggestionFeedback(input: $input) { errors } }';
const STATS =
  'query { codeSuggestionStats { byLanguage { key shown accepted rejected rate } byIntent { key shown accepted rejected rate } } }';

const FILE = [
  'import os',
  'import sys',
  'import json',
  'import time',
  '',
  'def load(path):',
  '    with open(path) as handle:',
  '        return json.load(handle)',
  '',
  'def total(items):',
  '    result = 0',
  '    ',
].join('\n');

function collect(client: Client, sessionId: string) {
  const updates: Update[] = [];
  const errors: unknown[] = [];
  const stop = client.subscribe<{ codeSuggestionUpdates: Update }>(
    { query: SUBSCRIPTION, variables: { sessionId } },
    {
      next: (result) => (result.errors ? errors.push(...result.errors) : updates.push(result.data!.codeSuggestionUpdates)),
      error: (error) => errors.push(error),
      complete: () => undefined,
    },
  );
  const until = (predicate: () => boolean, timeoutMs = 5_000) =>
    waitUntil(predicate, { timeoutMs, intervalMs: 10, what: () => JSON.stringify({ updates, errors }).slice(0, 800) });
  return { updates, errors, stop, until };
}

describe('continuous code suggestions over graphql-ws', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let alice: UserWithToken;
  let bob: UserWithToken;
  let admin: UserWithToken;
  let client: Client;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'stream', pieces: ['return ', 'sum(items)'] } });
    service = await startTestService({ env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub-coder' } });
    alice = await userWithToken(service.prisma, { scopes: ['ai_features'] });
    bob = await userWithToken(service.prisma);
    admin = await userWithToken(service.prisma, { admin: true });
    await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: alice.username });
    await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: bob.username });
    client = wsClient(service.url, alice.token);
  });
  afterAll(async () => {
    await client?.dispose();
    await service?.close();
    await stub?.close();
  });
  afterEach(() => stub.reset());

  const start = async (token = alice.token) => {
    const response = await service.graphql<{ codeSuggestionSessionStart: { sessionId: string } }>(START, {
      token,
      variables: { input: { fileName: 'app.py', content: FILE, cursorOffset: FILE.length } },
    });
    expect(response.body.errors).toBeUndefined();
    return response.body.data!.codeSuggestionSessionStart.sessionId;
  };
  const update = (sessionId: string, content: string, token = alice.token) =>
    service.graphql<{ codeSuggestionSessionUpdate: { revision: number } }>(UPDATE, {
      token,
      variables: { input: { sessionId, content, cursorOffset: content.length } },
    });
  const subscribed = () => new Promise((resolve) => setTimeout(resolve, 150));

  it('makes one generation for a burst of updates, with the newest text, streaming complete copies', async () => {
    const sessionId = await start();
    const stream = collect(client, sessionId);
    await subscribed();
    for (const tail of ['r', 're', 'res', 'resu']) await update(sessionId, `${FILE}${tail}`);
    await stream.until(() => stream.updates.some((event) => event.status === 'COMPLETE'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stub.requests).toHaveLength(1);
    expect(String(stub.requests[0].body.messages!.at(-1)!.content)).toContain('resu</prefix>');
    expect(stream.updates.map((event) => [event.status, event.text])).toEqual([
      ['STREAMING', 'return '],
      ['STREAMING', 'return sum(items)'],
      ['COMPLETE', 'return sum(items)'],
    ]);
    expect(stream.updates[2]).toMatchObject({ sessionId, revision: 4, intent: 'completion', generationType: null });
    expect(new Set(stream.updates.map((event) => event.suggestionId)).size).toBe(1);
    stream.stop();
  });

  it('supersedes the generation in flight: nothing of it follows its SUPERSEDED', async () => {
    const sessionId = await start();
    const stream = collect(client, sessionId);
    await subscribed();
    stub.script({ kind: 'stream', pieces: ['slow ', 'one ', 'never', ' ends'], delayMs: 150 }, { kind: 'stream', pieces: ['fast'] });
    await update(sessionId, `${FILE}a`);
    await stream.until(() => stream.updates.some((event) => event.status === 'STREAMING'));
    await update(sessionId, `${FILE}ab`);
    await stream.until(() => stream.updates.some((event) => event.status === 'COMPLETE'));
    await new Promise((resolve) => setTimeout(resolve, 700));
    const first = stream.updates[0].suggestionId;
    const superseded = stream.updates.findIndex((event) => event.status === 'SUPERSEDED');
    expect(stream.updates[superseded]).toMatchObject({ suggestionId: first, revision: 1, text: '' });
    expect(stream.updates.slice(superseded + 1).every((event) => event.suggestionId !== first)).toBe(true);
    expect(stream.updates.at(-1)).toMatchObject({ status: 'COMPLETE', text: 'fast', revision: 2 });
    expect(await stub.requests[0].ended).toBe('client-closed');
    stream.stop();
  });

  it('counts the debounce from when the update arrived, not from when it was stored', async () => {
    const sessionId = await start();
    const stream = collect(client, sessionId);
    await subscribed();
    // The session's row is locked for 400 ms, so storing the update waits that long: longer than the
    // debounce (150 ms), which has ended by then, so the generation starts as soon as it is stored.
    let sent = 0;
    let answered: Promise<unknown> = Promise.resolve();
    await service.prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM code_suggestion_sessions WHERE id = ${sessionId}::uuid FOR UPDATE`;
        sent = Date.now();
        answered = update(sessionId, `${FILE}q`);
        await new Promise((resolve) => setTimeout(resolve, 400));
      },
      { timeout: 5_000 },
    );
    await answered;
    await stream.until(() => stream.updates.some((event) => event.status === 'COMPLETE'));
    expect(stub.requests).toHaveLength(1);
    const waited = stub.requests[0].receivedAt - sent;
    expect(waited).toBeGreaterThanOrEqual(400);
    // From the end of its storing, it would be 400 + 150 ms.
    expect(waited).toBeLessThan(400 + 100);
    stream.stop();
  });

  it('stores the suggestions of sessions updated together, each with its own document; one whose session went says EMPTY', async () => {
    const sessionIds = await Promise.all([start(), start(), start(), start()]);
    const streams = sessionIds.map((sessionId) => collect(client, sessionId));
    await subscribed();
    // The four answers come in together, so their suggestions complete together and are stored in
    // one statement; the last session's row is deleted while its answer streams, so its row fails.
    stub.script(...sessionIds.map(() => ({ kind: 'stream' as const, pieces: ['return ', 'sum(items)'], delayMs: 200 })));
    const contents = sessionIds.map((_, index) => `${FILE}${'x'.repeat(index + 1)}`);
    await Promise.all(sessionIds.map((sessionId, index) => update(sessionId, contents[index])));
    const gone = streams[3];
    await gone.until(() => gone.updates.some((event) => event.status === 'STREAMING'));
    await service.prisma.$executeRaw`DELETE FROM code_suggestion_sessions WHERE id = ${sessionIds[3]}::uuid`;
    await Promise.all(
      streams.map((stream) => stream.until(() => stream.updates.some((event) => ['COMPLETE', 'EMPTY'].includes(event.status)))),
    );
    expect(streams.map((stream) => stream.updates.at(-1)!.status)).toEqual(['COMPLETE', 'COMPLETE', 'COMPLETE', 'EMPTY']);
    const stored = await service.prisma.codeSuggestion.findMany({ where: { sessionId: { in: sessionIds } } });
    expect(stored).toHaveLength(3);
    for (const [index, stream] of streams.slice(0, 3).entries()) {
      const complete = stream.updates.at(-1)!;
      expect(stored.find((row) => row.id === complete.suggestionId)).toMatchObject({
        sessionId: sessionIds[index],
        revision: 1,
        content: contents[index],
        cursorOffset: contents[index].length,
        language: 'python',
        intent: 'completion',
        generationType: null,
        text: 'return sum(items)',
      });
    }
    for (const stream of streams) stream.stop();
  });

  it('says EMPTY when the model has only whitespace', async () => {
    const sessionId = await start();
    const stream = collect(client, sessionId);
    await subscribed();
    stub.script({ kind: 'stream', pieces: ['  ', '\n'] });
    await update(sessionId, `${FILE}x`);
    await stream.until(() => stream.updates.length > 0 && stream.updates.at(-1)!.status === 'EMPTY');
    expect(stream.updates.map((event) => [event.status, event.reason])).toEqual([['EMPTY', 'nothing']]);
    stream.stop();
  });

  it('says why an EMPTY has nothing when the model fails', async () => {
    const sessionId = await start();
    const stream = collect(client, sessionId);
    await subscribed();
    // Not retried: the model refuses the request itself.
    stub.script({ kind: 'status', status: 400, body: { error: { message: 'bad request' } } });
    await update(sessionId, `${FILE}y`);
    await stream.until(() => stream.updates.length > 0 && stream.updates.at(-1)!.status === 'EMPTY');
    expect(stream.updates.at(-1)).toMatchObject({ status: 'EMPTY', reason: 'failed', text: '' });
    stream.stop();
  });

  it('refuses another user as if the session did not exist', async () => {
    const sessionId = await start();
    const response = await update(sessionId, `${FILE}z`, bob.token);
    expect(response.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const missing = await update('00000000-0000-4000-8000-000000000000', FILE);
    expect(missing.body.errors?.[0]?.message).toBe(response.body.errors?.[0]?.message);
    const bobClient = wsClient(service.url, bob.token);
    const stream = collect(bobClient, sessionId);
    await stream.until(() => stream.errors.length > 0);
    expect(JSON.stringify(stream.errors)).toContain('NOT_FOUND');
    await bobClient.dispose();
  });

  it('stores feedback with the document state, exports it, and counts it for admins only', async () => {
    const sessionId = await start();
    const stream = collect(client, sessionId);
    await subscribed();
    await update(sessionId, `${FILE}re`);
    await stream.until(() => stream.updates.some((event) => event.status === 'COMPLETE'));
    const suggestionId = stream.updates.at(-1)!.suggestionId;
    stream.stop();
    const feedback = await service.graphql(FEEDBACK, {
      token: alice.token,
      variables: { input: { sessionId, suggestionId, event: 'REJECTED', finalText: 'return 0' } },
    });
    expect(feedback.body).toEqual({ data: { codeSuggestionFeedback: { errors: [] } } });
    const others = await service.graphql(FEEDBACK, {
      token: bob.token,
      variables: { input: { sessionId, suggestionId, event: 'ACCEPTED' } },
    });
    expect(others.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    const dir = mkdtempSync(path.join(os.tmpdir(), 'duo-export-'));
    try {
      const out = path.join(dir, 'feedback.jsonl');
      const result = await runCli('export-feedback', ['--out', out], { DATABASE_URL: service.running.services.config.databaseUrl! });
      expect(result.code).toBe(0);
      const lines = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toContainEqual(
        expect.objectContaining({
          kind: 'code_suggestion',
          event: 'REJECTED',
          finalText: 'return 0',
          suggestionId,
          sessionId,
          fileName: 'app.py',
          content: `${FILE}re`,
          cursorOffset: FILE.length + 2,
          suggestion: 'return sum(items)',
          language: 'python',
          intent: 'completion',
        }),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    expect((await service.graphql(STATS, { token: alice.token })).body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const stats = await service.graphql<{ codeSuggestionStats: { byLanguage: Array<{ key: string; shown: number; rejected: number }> } }>(
      STATS,
      { token: admin.token },
    );
    expect(stats.body.errors).toBeUndefined();
    expect(stats.body.data!.codeSuggestionStats.byLanguage).toContainEqual(expect.objectContaining({ key: 'python', rejected: 1 }));
  });
});

describe('continuous code suggestions with no model configured', () => {
  let service: TestService;
  let user: UserWithToken;
  let client: Client;
  beforeAll(async () => {
    service = await startTestService();
    user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: user.username });
    client = wsClient(service.url, user.token);
  });
  afterAll(async () => {
    await client?.dispose();
    await service?.close();
  });

  it('says EMPTY, and why: no model', async () => {
    const { body } = await service.graphql<{ codeSuggestionSessionStart: { sessionId: string } }>(START, {
      token: user.token,
      variables: { input: { fileName: 'app.py', content: FILE, cursorOffset: FILE.length } },
    });
    const sessionId = body.data!.codeSuggestionSessionStart.sessionId;
    const stream = collect(client, sessionId);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await service.graphql(UPDATE, {
      token: user.token,
      variables: { input: { sessionId, content: `${FILE}z`, cursorOffset: FILE.length + 1 } },
    });
    await stream.until(() => stream.updates.length > 0);
    expect(stream.updates).toEqual([expect.objectContaining({ status: 'EMPTY', reason: 'no_model', text: '' })]);
    stream.stop();
  });
});
