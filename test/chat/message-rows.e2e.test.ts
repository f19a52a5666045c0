import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { randomUUID } from 'node:crypto';
import {
  conversationHistory,
  PROMPT_HISTORY_MESSAGES,
  createUserMessage,
  findRequest,
  listMessages,
  saveAssistantMessage,
  takePendingConfirmation,
  type NewAssistantMessage,
} from '../../src/chat/messages.service';
import { openDatabase, type Database } from '../../src/db/database';
import type { PrismaClient } from '../../src/db/prisma';
import { createLogger } from '../../src/logger';
import { createUser } from '../../src/users/users.service';
import { createTestDatabase, openTestDatabase, type TestDatabase } from '../helpers/test-database';

// A chat request's hot statements go straight to the pool of the client openDatabase made, and
// through Prisma's raw query for any other client (a transaction's): the rows must be the same.
describe('chat message rows, on the pool and through Prisma', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let pool: pg.Pool;
  let userId: number;

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    database = await openTestDatabase(testDatabase, { poolSize: 2, onPool: (made) => (pool = made) });
    userId = (await createUser(database.prisma, { username: 'rows' })).id;
  });
  afterAll(async () => {
    await database.close();
    await testDatabase.drop();
  });

  /** Runs `read` with a transaction's client: no pool is known for it, so Prisma's $queryRaw answers. */
  const throughPrisma = <T>(read: (client: PrismaClient) => Promise<T>) =>
    database.prisma.$transaction(async (transaction) => read(transaction as unknown as PrismaClient));

  it('reads a request and the history the same way on either path, with the types Prisma gives', async () => {
    const requestId = randomUUID();
    await createUserMessage(database.prisma, {
      userId,
      threadId: null,
      requestId,
      content: 'What is a "monad"? {a,b}',
      contextItems: [],
      clientSubscriptionId: 'sub-1',
      platformOrigin: 'vs_code_extension',
      agentVersionId: null,
      resourceId: 'gid://gitlab/Project/7',
      projectId: null,
    });
    const answer: NewAssistantMessage = {
      userId,
      threadId: null,
      requestId,
      content: 'A monoid in the category of endofunctors.',
      errors: [],
      extras: { sources: [{ path: 'a.ts' }], contextItemIds: [] },
      agentVersionId: null,
      clientSubscriptionId: 'sub-1',
    };
    expect((await saveAssistantMessage(database.prisma, answer)).created).toBe(true);

    const onPool = await findRequest(database.prisma, { userId, requestId });
    const viaPrisma = await throughPrisma((client) => findRequest(client, { userId, requestId }));
    expect(onPool).toEqual(viaPrisma);
    expect(onPool.userMessage).toMatchObject({ userId, threadId: null, errors: [], extras: {}, hasFeedback: false, contextItems: [] });
    expect(onPool.userMessage?.createdAt).toBeInstanceOf(Date);
    expect(onPool.answer).toMatchObject({ role: 'assistant', extras: { sources: [{ path: 'a.ts' }] }, errors: [] });

    const history = await conversationHistory(database.prisma, { userId, threadId: null }, [randomUUID()]);
    expect(history).toEqual(await throughPrisma((client) => conversationHistory(client, { userId, threadId: null }, [randomUUID()])));
    expect(history).toEqual([
      { role: 'user', content: 'What is a "monad"? {a,b}' },
      { role: 'assistant', content: 'A monoid in the category of endofunctors.' },
    ]);
    expect(await conversationHistory(database.prisma, { userId, threadId: null }, [requestId])).toEqual([]);
  });

  it('gives back the stored answer when a second one is saved for the request (unique violation on the pool)', async () => {
    const requestId = randomUUID();
    const answer = (content: string): NewAssistantMessage => ({
      userId,
      threadId: null,
      requestId,
      content,
      errors: [],
      extras: {},
      agentVersionId: null,
      clientSubscriptionId: null,
    });
    const first = await saveAssistantMessage(database.prisma, answer('first'));
    const second = await saveAssistantMessage(database.prisma, answer('second'));
    expect(second).toEqual({ event: first.event, created: false });
  });

  type Sent = { text: string; values: unknown[] };

  /** The statements sent to the pool while `work` runs, with their parameters. */
  async function statementsOf<T>(work: () => Promise<T>): Promise<{ result: T; texts: string[]; sent: Sent[] }> {
    const sent: Sent[] = [];
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    const spy = jest.spyOn(pool, 'query').mockImplementation((config: unknown, ...rest: unknown[]) => {
      if (typeof config === 'object' && config !== null) {
        const { text, values } = config as Sent;
        sent.push({ text, values });
      }
      return query(config, ...rest);
    });
    try {
      const result = await work();
      return { result, texts: sent.map((statement) => statement.text), sent };
    } finally {
      spy.mockRestore();
    }
  }

  const question = (overrides: Partial<Parameters<typeof createUserMessage>[1]> = {}) => ({
    userId,
    threadId: null,
    requestId: randomUUID(),
    content: 'Why?',
    contextItems: [],
    clientSubscriptionId: null,
    platformOrigin: null,
    agentVersionId: null,
    resourceId: null,
    projectId: null,
    ...overrides,
  });

  it('stores the messages asked for in one turn with one statement, each with its own values', async () => {
    const asked = [
      question({ content: 'one "quoted" \\ {a,b}', clientSubscriptionId: 'sub-a' }),
      question({ content: 'two', platformOrigin: 'web', resourceId: 'gid://gitlab/Project/3', projectId: null }),
      question({ content: 'three', agentVersionId: 'gid://gitlab/Ai::AgentVersion/1' }),
    ];
    const { result: stored, texts } = await statementsOf(() =>
      Promise.all(asked.map((message) => createUserMessage(database.prisma, message))),
    );
    expect(texts.filter((text) => text.includes('INSERT INTO ai_messages'))).toHaveLength(1);
    for (const [index, message] of asked.entries()) {
      expect(stored[index]).toMatchObject({
        requestId: message.requestId,
        role: 'user',
        content: message.content,
        errors: [],
        contextItems: [],
      });
      // What a later read gives is what the insert answered.
      const read = await findRequest(database.prisma, { userId, requestId: message.requestId });
      expect(read.userMessage).toMatchObject({
        content: message.content,
        clientSubscriptionId: message.clientSubscriptionId,
        platformOrigin: message.platformOrigin,
        agentVersionId: message.agentVersionId,
        resourceId: message.resourceId,
        extras: {},
      });
      expect(read.userMessage!.createdAt.toISOString()).toBe(stored[index].timestamp);
    }
  });

  it('fails only the message whose row is refused when several are stored together', async () => {
    const good = [question({ content: 'kept 1' }), question({ content: 'kept 2' })];
    const refused = question({ userId: 999_999, content: 'no such user' });
    const outcomes = await Promise.allSettled([good[0], refused, good[1]].map((message) => createUserMessage(database.prisma, message)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    for (const message of good)
      expect((await findRequest(database.prisma, { userId, requestId: message.requestId })).userMessage).not.toBeNull();
    expect(await database.prisma.aiMessage.count({ where: { requestId: refused.requestId } })).toBe(0);
  });

  it('answers stored together: a request already answered gets its answer back, the others are stored', async () => {
    const answered = randomUUID();
    const answer = (requestId: string, content: string, errors: string[] = []): NewAssistantMessage => ({
      userId,
      threadId: null,
      requestId,
      content,
      errors,
      extras: { sources: [] },
      agentVersionId: null,
      clientSubscriptionId: null,
    });
    const first = await saveAssistantMessage(database.prisma, answer(answered, 'first'));
    const fresh = [randomUUID(), randomUUID()];
    const { result, texts } = await statementsOf(() =>
      Promise.all([
        saveAssistantMessage(database.prisma, answer(fresh[0], 'fresh 0')),
        saveAssistantMessage(database.prisma, answer(answered, 'again')),
        saveAssistantMessage(database.prisma, answer(fresh[1], 'fresh 1', ['Error code: A1000'])),
      ]),
    );
    expect(texts.filter((text) => text.includes('INSERT INTO ai_messages'))[0]).toMatch(/unnest/);
    expect(result[1]).toEqual({ event: first.event, created: false });
    expect(result[0]).toMatchObject({ created: true, event: { requestId: fresh[0], content: 'fresh 0', errors: [] } });
    expect(result[2]).toMatchObject({ created: true, event: { requestId: fresh[1], content: 'fresh 1', errors: ['Error code: A1000'] } });
    expect(await database.prisma.aiMessage.count({ where: { requestId: answered } })).toBe(1);
  });

  it('reads the requests of jobs that start together with one statement, each its own', async () => {
    const other = (await createUser(database.prisma, { username: 'other-reader' })).id;
    const mine = question({ content: 'mine' });
    const theirs = question({ userId: other, content: 'theirs' });
    await Promise.all([createUserMessage(database.prisma, mine), createUserMessage(database.prisma, theirs)]);
    const { result, texts } = await statementsOf(() =>
      Promise.all([
        findRequest(database.prisma, { userId, requestId: mine.requestId }),
        findRequest(database.prisma, { userId, requestId: theirs.requestId }),
        findRequest(database.prisma, { userId: other, requestId: theirs.requestId }),
        findRequest(database.prisma, { userId, requestId: randomUUID() }),
      ]),
    );
    expect(texts).toHaveLength(1);
    expect(result.map((found) => found.userMessage?.content ?? null)).toEqual(['mine', null, 'theirs', null]);
  });

  it('reads the newest turns of a long conversation backwards on the index, without sorting it all', async () => {
    const other = (await createUser(database.prisma, { username: 'long' })).id;
    await database.prisma.$executeRaw`
      INSERT INTO ai_messages (id, user_id, thread_id, request_id, role, content, created_at)
      SELECT gen_random_uuid(), ${other}, NULL, gen_random_uuid(), 'user', 'turn ' || n, now() - n * interval '1 second'
      FROM generate_series(1, 1000) AS n`;
    // The statement as it is sent, explained with the same parameters (the table's statistics are stale, as in a busy conversation).
    const { result: history, sent } = await statementsOf(() => conversationHistory(database.prisma, { userId: other, threadId: null }, []));
    expect(history).toHaveLength(PROMPT_HISTORY_MESSAGES);
    expect(history.at(-1)).toEqual({ role: 'user', content: 'turn 1' });
    expect(sent).toHaveLength(1);
    const plan = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) ${sent[0].text}`, sent[0].values);
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toMatch(/Index Scan Backward using ai_messages_user_id_thread_id_created_at_id_idx/);
    expect(text).not.toMatch(/Sort/);
    expect(text).toMatch(new RegExp(`rows=${PROMPT_HISTORY_MESSAGES} loops=1\\)\\n\\s+Index Cond`));
  });

  /**
   * The statement's generic plan, made while a new, never-analyzed ai_messages (a temporary table in
   * its place) held each of `sizes` rows, explained once `grow` more were added: PostgreSQL keeps a
   * generic plan made on a small table as the table grows (without autovacuum, never analyzed).
   */
  async function genericPlans(
    statement: Sent,
    options: { sizes: number[]; grow: number; addRows: (client: pg.PoolClient, count: number) => Promise<unknown> },
  ): Promise<string[]> {
    const client = await pool.connect();
    // EXECUTE takes its parameters written out.
    const parameters = statement.values
      .map((value) => (Array.isArray(value) ? client.escapeLiteral(`{${value.join(',')}}`) : client.escapeLiteral(String(value))))
      .join(', ');
    const plans: string[] = [];
    try {
      await client.query('SET plan_cache_mode = force_generic_plan');
      for (const size of options.sizes) {
        await client.query('CREATE TEMP TABLE ai_messages (LIKE public.ai_messages INCLUDING ALL)');
        await options.addRows(client, size);
        await client.query(`PREPARE generic AS ${statement.text}`);
        await client.query(`EXECUTE generic(${parameters})`);
        await options.addRows(client, options.grow);
        const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) EXECUTE generic(${parameters})`);
        plans.push(plan.rows.map((row) => row['QUERY PLAN']).join('\n'));
        await client.query('DEALLOCATE generic; DROP TABLE pg_temp.ai_messages');
      }
    } finally {
      // Closed, not returned to the pool: its session's plan setting (and, after a failure, its
      // temporary table and statement) must not reach the statements that use it next.
      client.release(true);
    }
    return plans;
  }

  /** Adds `count` turns to a user's legacy conversation, each a message of every role given, the newest first. */
  const turnsOf = (user: number, roles: Array<'user' | 'assistant'>) => (client: pg.PoolClient, count: number) =>
    client.query(
      `INSERT INTO ai_messages (id, user_id, thread_id, request_id, role, content, created_at)
       SELECT gen_random_uuid(), $1, NULL, gen_random_uuid(), role, 'turn ' || n, now() - n * interval '1 second'
       FROM generate_series(1, $2::int) AS n, unnest($3::ai_message_role[]) AS role`,
      [user, count, roles],
    );

  it('reads them on that index on its generic plan too, made while the statistics know no rows', async () => {
    const talker = (await createUser(database.prisma, { username: 'generic' })).id;
    const { sent } = await statementsOf(() => conversationHistory(database.prisma, { userId: talker, threadId: null }, [randomUUID()]));
    // How short the conversation is when the plan is made sways the planner: with the old
    // (user_id, request_id) index it took that index and a sort when made at 200 rows.
    const plans = await genericPlans(sent[0], {
      sizes: [0, 50, 200, 1000],
      grow: 2000,
      addRows: turnsOf(talker, ['user']),
    });
    for (const text of plans) {
      expect(text).toMatch(/Index Scan Backward using ai_messages_user_id_thread_id_created_at_id_idx/);
      expect(text).not.toMatch(/Sort/);
    }
  });

  it('reads the requests of jobs that start together on the request index, on a generic plan made while the table was small', async () => {
    const reader = (await createUser(database.prisma, { username: 'batch-reader' })).id;
    const { sent } = await statementsOf(() =>
      Promise.all([
        findRequest(database.prisma, { userId: reader, requestId: randomUUID() }),
        findRequest(database.prisma, { userId: reader, requestId: randomUUID() }),
      ]),
    );
    expect(sent).toHaveLength(1);
    // With `request_id = ANY($1)` a plan made at 10 to 200 requests was a sequential scan.
    const plans = await genericPlans(sent[0], {
      sizes: [0, 10, 100, 500],
      grow: 5000,
      addRows: turnsOf(reader, ['user', 'assistant']),
    });
    for (const text of plans) {
      expect(text).toMatch(/Index Scan using ai_messages_request_id_idx|Bitmap Index Scan on ai_messages_request_id_idx/);
      expect(text).not.toMatch(/Seq Scan on ai_messages/);
    }
  });

  it("lists a legacy conversation and finds its latest answer on the index's order, without sorting it all", async () => {
    const reader = (await createUser(database.prisma, { username: 'lister' })).id;
    await database.prisma.$executeRaw`
      INSERT INTO ai_messages (id, user_id, thread_id, request_id, role, content, created_at)
      SELECT gen_random_uuid(), ${reader}, NULL, gen_random_uuid(), CASE WHEN n % 2 = 0 THEN 'assistant' ELSE 'user' END::ai_message_role,
        'turn ' || n, now() - n * interval '1 second'
      FROM generate_series(1, 2000) AS n`;
    await database.prisma.$executeRaw`ANALYZE ai_messages`;
    // The statements as they reach the pool (listMessages' own, Prisma's for the confirmation), explained with their parameters.
    const { sent } = await statementsOf(async () => {
      const listed = await listMessages(database.prisma, { userId: reader, threadId: null, limit: 100 });
      expect(listed).toHaveLength(100);
      expect(listed[0].content).toBe('turn 2000');
      expect(await takePendingConfirmation(database.prisma, { userId: reader, threadId: null }, randomUUID())).toBeNull();
    });
    const messageReads = sent.filter(
      (statement) => /FROM ("public"\."ai_messages"|ai_messages m\b)/.test(statement.text) && /ORDER BY/.test(statement.text),
    );
    expect(messageReads).toHaveLength(2);
    for (const statement of messageReads) {
      const plan = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) ${statement.text}`, statement.values);
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(text).toMatch(/Index Scan (Backward )?using ai_messages_user_id_thread_id_created_at_id_idx/);
      expect(text).not.toMatch(/Sort/);
    }
  });

  it('prepares each statement once per connection and runs it again by name', async () => {
    let single: pg.Pool | undefined;
    const one = await openTestDatabase(testDatabase, { poolSize: 1, onPool: (made) => (single = made) });
    try {
      for (let round = 0; round < 3; round += 1) {
        await conversationHistory(one.prisma, { userId, threadId: null }, [randomUUID()]);
        await conversationHistory(one.prisma, { userId, threadId: 12345 }, []);
      }
      // The same connection (the pool has one): two texts (legacy conversation, thread), two statements.
      const prepared = await single!.query<{ name: string }>(
        "SELECT name FROM pg_prepared_statements WHERE statement LIKE '%FROM ai_messages%' ORDER BY name",
      );
      expect(prepared.rows).toHaveLength(2);
    } finally {
      await one.close();
    }
  });

  /**
   * How often PostgreSQL planned the statements matching `like` anew (custom) or reused its generic
   * plan, over what `read` does on one connection, in a database of its own holding one user's 4,000
   * messages with statistics that know them (its choice between plans follows them, so other tests'
   * rows must not sway it). It tries five custom plans, then keeps the generic one only if it costs no more.
   */
  async function plansKept(
    like: string,
    read: (prisma: PrismaClient, userId: number, writer: PrismaClient) => Promise<void>,
  ): Promise<Array<{ generic: number; custom: number }>> {
    const own = await createTestDatabase();
    const writer = await openTestDatabase(own);
    let single: pg.Pool | undefined;
    const one = await openTestDatabase(own, { poolSize: 1, onPool: (made) => (single = made) });
    try {
      const talker = (await createUser(writer.prisma, { username: 'talker' })).id;
      await writer.prisma.$executeRaw`
        INSERT INTO ai_messages (id, user_id, thread_id, request_id, role, content, created_at)
        SELECT gen_random_uuid(), ${talker}, NULL, gen_random_uuid(), 'user', 'turn ' || n, now() - n * interval '1 second'
        FROM generate_series(1, 4000) AS n`;
      await writer.prisma.$executeRaw`ANALYZE ai_messages`;
      await read(one.prisma, talker, writer.prisma);
      const plans = await single!.query<{ generic: number; custom: number }>(
        'SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE statement LIKE $1',
        [like],
      );
      return plans.rows;
    } finally {
      await one.close();
      await writer.close();
      await own.drop();
    }
  }

  it("keeps the history read's generic plan: PostgreSQL does not plan it again on every call", async () => {
    const plans = await plansKept('%FROM ai_messages%', async (prisma, talker) => {
      for (let round = 0; round < 8; round += 1) {
        const history = await conversationHistory(prisma, { userId: talker, threadId: null }, [randomUUID()]);
        expect(history).toHaveLength(PROMPT_HISTORY_MESSAGES);
      }
    });
    expect(plans).toEqual([{ generic: 3, custom: 5 }]);
  });

  it("keeps the request read's generic plan for a job that starts alone: PostgreSQL does not plan it again on every call", async () => {
    const plans = await plansKept('%FROM ai_message_context_items%', async (prisma, talker, writer) => {
      const asked = await writer.aiMessage.findMany({ where: { userId: talker }, take: 8, orderBy: { createdAt: 'desc' } });
      // One at a time, as jobs that start alone in their turn of the event loop read them.
      for (const message of asked) {
        const { userMessage } = await findRequest(prisma, { userId: talker, requestId: message.requestId });
        expect(userMessage?.content).toBe(message.content);
      }
    });
    expect(plans).toEqual([{ generic: 3, custom: 5 }]);
  });

  it('names no statement on the embedded database, whose connections share one session', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-message-rows-'));
    const embedded = await openDatabase({ databaseUrl: undefined, dataDir, logger: createLogger('silent'), embeddedRole: 'owner' });
    try {
      await embedded.migrate();
      const owner = (await createUser(embedded.prisma, { username: 'embedded' })).id;
      // Several connections at once, twice: a statement named by one would already exist for the others.
      for (let round = 0; round < 2; round += 1) {
        const reads = Array.from({ length: 6 }, () =>
          conversationHistory(embedded.prisma, { userId: owner, threadId: null }, [randomUUID()]),
        );
        expect(await Promise.all(reads)).toEqual(Array.from({ length: 6 }, () => []));
      }
      // Messages stored and requests read together (one statement each) work there too.
      const asked = [question({ userId: owner, content: 'e1' }), question({ userId: owner, content: 'e2' })];
      await Promise.all(asked.map((message) => createUserMessage(embedded.prisma, message)));
      const found = await Promise.all(
        asked.map((message) => findRequest(embedded.prisma, { userId: owner, requestId: message.requestId })),
      );
      expect(found.map((one) => one.userMessage?.content)).toEqual(['e1', 'e2']);
    } finally {
      await embedded.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
