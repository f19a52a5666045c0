import { randomUUID } from 'node:crypto';
import { INPUT_LIMITS } from '../../src/validation';
import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';
import { overHttp } from './transports';

// What a user can write is bounded per user: feedback is one row per thing rated (30 calls on one
// message made 30 rows of 15 KiB; ten on one suggestion 4 MB), and sizes have limits that fit them.
const CHAT_FEEDBACK = 'mutation($input: DuoUserFeedbackInput!) { duoUserFeedback(input: $input) { errors } }';
const SUGGESTION_FEEDBACK = 'mutation($input: CodeSuggestionFeedbackInput!) { codeSuggestionFeedback(input: $input) { errors } }';

describe('per-user bounds on what users can store', () => {
  let service: TestService;
  let user: UserWithToken;

  beforeAll(async () => {
    service = await startTestService();
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
});
