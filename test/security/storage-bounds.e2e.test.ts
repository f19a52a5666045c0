import { randomUUID } from 'node:crypto';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { THREAD_MAX_AGE_MS } from '../../src/chat/threads.service';
import { createQueues, MAINTENANCE_JOBS, QUEUE_NAMES } from '../../src/queues';
import { bullPrefix } from '../../src/redis-keys';
import { SESSION_RETENTION } from '../../src/suggestions/sessions/session-retention';
import { INPUT_LIMITS } from '../../src/validation';
import { TEST_REDIS_URL } from '../helpers/test-env';
import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';
import { overHttp } from './transports';

// What a user can write is bounded per user: feedback is one row per thing rated (30 calls on one
// message made 30 rows of 15 KiB; ten on one suggestion 4 MB), and sizes have limits that fit them.
const CHAT_FEEDBACK = 'mutation($input: DuoUserFeedbackInput!) { duoUserFeedback(input: $input) { errors } }';
const START = 'mutation($input: CodeSuggestionSessionStartInput!) { codeSuggestionSessionStart(input: $input) { sessionId } }';
const UPDATE = 'mutation($input: CodeSuggestionSessionUpdateInput!) { codeSuggestionSessionUpdate(input: $input) { revision } }';
const DAY_MS = 24 * 60 * 60 * 1000;
const SUGGESTION_FEEDBACK = 'mutation($input: CodeSuggestionFeedbackInput!) { codeSuggestionFeedback(input: $input) { errors } }';

describe('per-user bounds on what users can store', () => {
  let service: TestService;
  let user: UserWithToken;

  beforeAll(async () => {
    service = await startTestService({ role: 'all' });
    user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
  });
  afterAll(() => service.close());

  async function suggestion(owner: UserWithToken) {
    const session = await service.prisma.codeSuggestionSession.create({
      data: { id: randomUUID(), userId: owner.id, fileName: 'a.ts', content: 'x', cursorOffset: 0 },
    });
    return service.prisma.codeSuggestion.create({
      data: { id: randomUUID(), sessionId: session.id, revision: 1, content: 'x', cursorOffset: 0, intent: 'completion', text: 'y' },
    });
  }

  it('duoUserFeedback: one per message per user, the newest replacing the old', async () => {
    const message = await service.prisma.aiMessage.create({
      data: { id: randomUUID(), userId: user.id, requestId: randomUUID(), role: 'assistant', content: 'an answer' },
    });
    const improveWhat = 'i'.repeat(15 * 1024);
    for (const action of ['thumbs_down', 'thumbs_down', 'thumbs_up', 'thumbs_down', 'thumbs_up']) {
      const result = await overHttp(service.url, {
        query: CHAT_FEEDBACK,
        variables: { input: { aiMessageId: message.id, trackingEvent: { category: 'chat', action, extra: { improveWhat } } } },
        token: user.token,
      });
      expect(result.errors).toBeUndefined();
    }
    const rows = await service.prisma.aiMessageFeedback.findMany({ where: { messageId: message.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ userId: user.id, event: 'thumbs_up' });
  });

  it('codeSuggestionFeedback: one per suggestion per event, the newest replacing the old, finalText bounded', async () => {
    const rated = await suggestion(user);
    const send = (event: string, finalText: string | null) =>
      overHttp(service.url, {
        query: SUGGESTION_FEEDBACK,
        variables: { input: { sessionId: rated.sessionId, suggestionId: rated.id, event, finalText } },
        token: user.token,
      });
    for (let index = 0; index < 10; index++) expect((await send('REJECTED', `mine ${index} ${'x'.repeat(15_000)}`)).errors).toBeUndefined();
    expect((await send('ACCEPTED', null)).errors).toBeUndefined();
    expect((await send('ACCEPTED', null)).errors).toBeUndefined();
    const rows = await service.prisma.codeSuggestionFeedback.findMany({ where: { suggestionId: rated.id }, orderBy: { event: 'asc' } });
    expect(rows.map((row) => [row.event, row.finalText?.slice(0, 6) ?? null])).toEqual([
      ['ACCEPTED', null],
      ['REJECTED', 'mine 9'],
    ]);

    const tooLong = await send('REJECTED', 'f'.repeat(INPUT_LIMITS.suggestionFinalText + 1));
    expect(tooLong.errors?.[0]).toMatchObject({
      message: `finalText is too long (maximum is ${INPUT_LIMITS.suggestionFinalText} characters)`,
      extensions: { code: 'BAD_USER_INPUT' },
    });
    expect(
      (await service.prisma.codeSuggestionFeedback.findFirstOrThrow({ where: { suggestionId: rated.id, event: 'REJECTED' } })).finalText,
    ).toMatch(/^mine 9/);
  });

  it('continuous suggestions: starting a session past the live limit ends the least recently updated one', async () => {
    const typist = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: typist.username });
    const content = 'x'.repeat(100_000);
    const started: string[] = [];
    for (let index = 0; index <= SESSION_RETENTION.liveSessionsPerUser; index++) {
      const result = await overHttp(service.url, {
        query: START,
        variables: { input: { fileName: `f${index}.py`, content, cursorOffset: 0 } },
        token: typist.token,
      });
      expect(result.errors).toBeUndefined();
      started.push((result.data as { codeSuggestionSessionStart: { sessionId: string } }).codeSuggestionSessionStart.sessionId);
    }
    const live = await service.prisma.codeSuggestionSession.findMany({
      where: { userId: typist.id, lastActiveAt: { gte: new Date(Date.now() - 60_000) } },
      select: { id: true },
    });
    expect(live.map((session) => session.id).sort()).toEqual(started.slice(1).sort());
    expect((await service.prisma.codeSuggestionSession.findUniqueOrThrow({ where: { id: started[0] } })).content).toBe('');
    const ended = await overHttp(service.url, {
      query: UPDATE,
      variables: { input: { sessionId: started[0], content: 'y', cursorOffset: 0 } },
      token: typist.token,
    });
    expect(ended.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('the hourly purge (through the maintenance queue) keeps what users stored within its age and count', async () => {
    const owner = await userWithToken(service.prisma);
    const ago = (ms: number) => new Date(Date.now() - ms);
    // Legacy chat (no thread): a message past 30 days goes, with its feedback; a recent one stays.
    const [oldMessage, newMessage] = [randomUUID(), randomUUID()];
    await service.prisma.aiMessage.createMany({
      data: [
        {
          id: oldMessage,
          userId: owner.id,
          requestId: randomUUID(),
          role: 'user',
          content: 'old',
          createdAt: ago(THREAD_MAX_AGE_MS + DAY_MS),
        },
        { id: newMessage, userId: owner.id, requestId: randomUUID(), role: 'user', content: 'new' },
      ],
    });
    await service.prisma.aiMessageFeedback.create({ data: { messageId: oldMessage, userId: owner.id, event: 'thumbs_up' } });
    // Suggestions: one past 30 days (with feedback), and more than a user keeps.
    const session = await service.prisma.codeSuggestionSession.create({
      data: { id: randomUUID(), userId: owner.id, fileName: 'a.py', content: 'doc', cursorOffset: 0, lastActiveAt: ago(DAY_MS) },
    });
    const emptySession = await service.prisma.codeSuggestionSession.create({
      data: { id: randomUUID(), userId: owner.id, fileName: 'b.py', content: 'doc', cursorOffset: 0, lastActiveAt: ago(DAY_MS) },
    });
    const row = (createdAt: Date) => ({
      id: randomUUID(),
      sessionId: session.id,
      revision: 1,
      content: 'doc',
      cursorOffset: 0,
      intent: 'completion',
      text: 'x',
      createdAt,
    });
    const aged = row(ago(SESSION_RETENTION.suggestionMaxAgeMs + DAY_MS));
    const kept = Array.from({ length: SESSION_RETENTION.suggestionsPerUser + 3 }, (_unused, index) => row(ago((index + 1) * 60_000)));
    await service.prisma.codeSuggestion.createMany({ data: [aged, ...kept] });
    await service.prisma.codeSuggestionFeedback.create({ data: { suggestionId: aged.id, userId: owner.id, event: 'ACCEPTED' } });

    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    const queues = createQueues({ connection: redis, prefix: service.redisPrefix, logger: service.running.services.logger });
    const eventsConnection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    const events = new QueueEvents(QUEUE_NAMES.maintenance, { connection: eventsConnection, prefix: bullPrefix(service.redisPrefix) });
    try {
      await events.waitUntilReady();
      const job = await queues.maintenance.add(MAINTENANCE_JOBS.purgeExpiredThreads, {});
      // Counted over every user (the tests before this one left rows too); this user's rows are checked below.
      const purged = (await job.waitUntilFinished(events, 20_000)) as Record<string, number>;
      expect(purged.legacyMessages).toBeGreaterThanOrEqual(1);
      expect(purged.suggestions).toBeGreaterThanOrEqual(4);
      expect(purged.suggestionSessions).toBeGreaterThanOrEqual(1);
    } finally {
      await events.close();
      eventsConnection.disconnect();
      await queues.close();
      redis.disconnect();
    }
    expect((await service.prisma.aiMessage.findMany({ where: { userId: owner.id } })).map((message) => message.id)).toEqual([newMessage]);
    expect(await service.prisma.aiMessageFeedback.count({ where: { messageId: oldMessage } })).toBe(0);
    const left = await service.prisma.codeSuggestion.findMany({ where: { sessionId: session.id }, orderBy: { createdAt: 'desc' } });
    expect(left.map((suggestion) => suggestion.id)).toEqual(
      kept.slice(0, SESSION_RETENTION.suggestionsPerUser).map((suggestion) => suggestion.id),
    );
    expect(await service.prisma.codeSuggestionFeedback.count({ where: { suggestionId: aged.id } })).toBe(0);
    // An expired session keeps its suggestions' file name, not its document; one with no suggestion goes.
    expect(await service.prisma.codeSuggestionSession.findUnique({ where: { id: session.id } })).toMatchObject({
      content: '',
      fileName: 'a.py',
    });
    expect(await service.prisma.codeSuggestionSession.findUnique({ where: { id: emptySession.id } })).toBeNull();
  });
});
