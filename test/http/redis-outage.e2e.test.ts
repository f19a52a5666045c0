import { openRawCable, type CableFrame } from '../helpers/cable-clients';
import { LSP_CHAT_MUTATION, LSP_SUBSCRIPTION } from '../helpers/chat-client';
import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis';
import { parseScrape, valueOf } from '../helpers/prometheus';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

// A Redis of this file's own, so it can stop answering without touching the one every other test uses.
describe('a Redis that stops answering', () => {
  let redis: OwnRedis;
  let service: TestService;
  let alice: UserWithToken;

  beforeAll(async () => {
    redis = await startOwnRedis();
    service = await startTestService({ env: { REDIS_URL: redis.url, METRICS_ALLOWED_CIDRS: '127.0.0.1/32, ::1' } });
    alice = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: alice.username });
  });
  afterAll(async () => {
    redis?.resume();
    await service?.close();
    redis?.stop();
  });

  const scrape = async () => parseScrape(await (await fetch(`${service.url}/-/metrics`)).text());
  const refused = async () => valueOf(await scrape(), 'duo_redis_commands_refused_total');
  const currentUser = () => service.graphql('{ currentUser { username } }', { token: alice.token });
  const chat = (question = 'How do I parse a URL?') =>
    service.graphql<{ aiAction: { requestId: string; errors: string[] } | null }>(LSP_CHAT_MUTATION, {
      token: alice.token,
      variables: { question, resourceId: null, currentFileContext: null, platformOrigin: 'language_server' },
    });

  it('fails what needs it within seconds instead of waiting, serves what does not, and recovers when Redis answers again', async () => {
    expect((await chat()).body.data?.aiAction?.errors).toEqual([]);
    expect(valueOf(await scrape(), 'duo_redis_answering')).toBe(1);
    redis.pause();
    try {
      // The rate limit cannot be read: the request goes through, as the limiter's rule says.
      expect((await currentUser()).body).toEqual({ data: { currentUser: { username: alice.username } } });
      // That command went unanswered: from now on the request connection fails its commands at once, so the
      // next requests wait for no timeout of their own (each takes a refusal instead of a 2 s wait).
      expect(valueOf(await scrape(), 'duo_redis_answering')).toBe(0);
      const before = await refused();
      for (let index = 0; index < 3; index += 1)
        expect((await currentUser()).body).toEqual({ data: { currentUser: { username: alice.username } } });
      expect(await refused()).toBeGreaterThanOrEqual(before + 3);
      // The answer cannot be queued: an error the client can show, not a request that never ends.
      const stalled = await chat('Asked while Redis was away');
      expect(stalled.body.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      redis.resume();
    }
    await waitUntil(async () => valueOf(await scrape(), 'duo_redis_answering') === 1, {
      what: 'the request connection to see Redis answer again',
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    await waitUntil(async () => (await chat()).body.data?.aiAction?.errors?.length === 0, {
      what: 'aiAction to work again',
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    // The question whose answer could not be queued was stored: it has the answer GitLab gives a failed request.
    type Messages = { aiMessages: { nodes: Array<{ requestId: string; role: string; content: string; errorCode: string | null }> } };
    const { body } = await service.graphql<Messages>('{ aiMessages { nodes { requestId role content errorCode } } }', {
      token: alice.token,
    });
    const nodes = body.data!.aiMessages.nodes;
    const asked = nodes.find((node) => node.content === 'Asked while Redis was away')!;
    expect(nodes.filter((node) => node.requestId === asked.requestId).map((node) => [node.role, node.errorCode])).toEqual([
      ['USER', null],
      ['ASSISTANT', 'A9999'],
    ]);
  }, 30_000);

  it('confirms an ActionCable subscription only once Redis listens for its events, as Rails defers a stream_from', async () => {
    const cable = await openRawCable(`${service.url.replace(/^http/, 'ws')}/-/cable`, { token: alice.token });
    const identifier = JSON.stringify({
      channel: 'GraphqlChannel',
      query: LSP_SUBSCRIPTION,
      variables: JSON.stringify({ userId: `gid://gitlab/User/${alice.id}`, aiAction: 'CHAT', clientSubscriptionId: 'cable-confirm' }),
      operationName: 'aiCompletionResponse',
    });
    try {
      expect(await cable.take()).toEqual({ type: 'welcome' });
      redis.pause();
      try {
        cable.send({ command: 'subscribe', identifier });
        // The language server sends its question on the confirmation: while the SUBSCRIBE waits, an answer published
        // would reach nobody, so nothing is confirmed (the first version confirmed after the rate limit's 2 s).
        await expect(cable.take({ timeoutMs: 3_000 })).rejects.toThrow(/No frame within/);
      } finally {
        redis.resume();
      }
      expect(await cable.take({ timeoutMs: 10_000 })).toEqual({ identifier, type: 'confirm_subscription' });
      expect(await cable.take()).toEqual({ identifier, message: { result: { data: { aiCompletionResponse: null } }, more: true } });
      // A question answered in the mutation itself (/help needs no model) reaches the subscription.
      await waitUntil(async () => (await chat()).body.data?.aiAction?.errors?.length === 0, {
        what: 'aiAction to work again',
        timeoutMs: 10_000,
        intervalMs: 100,
      });
      const { body } = await service.graphql<{ aiAction: { requestId: string } }>(LSP_CHAT_MUTATION, {
        token: alice.token,
        variables: { question: '/help', clientSubscriptionId: 'cable-confirm', platformOrigin: 'language_server' },
      });
      const requestId = body.data!.aiAction.requestId;
      type Streamed = {
        message?: { result?: { data?: { aiCompletionResponse?: { requestId: string; role: string; chunkId: number | null } } } };
      };
      const answered = (frame: CableFrame) => {
        const message = (frame as Streamed).message?.result?.data?.aiCompletionResponse;
        return message?.requestId === requestId && message.role === 'ASSISTANT' && message.chunkId === null;
      };
      await waitUntil(() => cable.frames.some(answered), { what: 'the /help answer over ActionCable', timeoutMs: 10_000, intervalMs: 20 });
    } finally {
      redis.resume();
      await cable.close();
    }
  }, 40_000);

  it('serves again once a Redis that was down is started anew (nothing in it)', async () => {
    await redis.kill();
    try {
      expect((await currentUser()).body).toEqual({ data: { currentUser: { username: alice.username } } });
      expect((await chat('Asked while Redis was down')).body.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      await redis.start();
    }
    await waitUntil(async () => (await chat()).body.data?.aiAction?.errors?.length === 0, {
      what: 'aiAction to work again after Redis started anew',
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    expect(valueOf(await scrape(), 'duo_redis_answering')).toBe(1);
  }, 30_000);

  it('answers a question with a client subscription id with the A9999 error when Redis is down, as one without', async () => {
    // Every IDE and web chat request carries a clientSubscriptionId: telling an older request it was superseded needs Redis.
    await redis.kill();
    try {
      const response = await service.graphql(LSP_CHAT_MUTATION, {
        token: alice.token,
        variables: { question: 'Asked on a subscription while Redis was down', clientSubscriptionId: 'down-sub', platformOrigin: 'lsp' },
      });
      expect(response.body.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      await redis.start();
    }
    const asked = await service.prisma.aiMessage.findFirstOrThrow({ where: { content: 'Asked on a subscription while Redis was down' } });
    const answers = await service.prisma.aiMessage.findMany({ where: { requestId: asked.requestId, role: 'assistant' } });
    expect(answers.map((answer) => answer.errors)).toEqual([[expect.stringContaining('A9999')]]);
    await waitUntil(async () => (await chat()).body.data?.aiAction?.errors?.length === 0, {
      what: 'aiAction to work again after Redis started anew',
      timeoutMs: 15_000,
      intervalMs: 100,
    });
  }, 30_000);
});
