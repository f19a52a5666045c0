import { LSP_CHAT_MUTATION } from '../helpers/chat-client';
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
});
