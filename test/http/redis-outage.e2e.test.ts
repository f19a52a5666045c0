import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { LSP_CHAT_MUTATION } from '../helpers/chat-client';
import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { freePort } from '../helpers/free-port';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

// A Redis of this file's own, so it can stop answering (SIGSTOP: its connections stay open, its replies stop) without
// touching the one every other test uses.
describe('a Redis that stops answering', () => {
  let redis: ChildProcess;
  let service: TestService;
  let alice: UserWithToken;

  beforeAll(async () => {
    const port = await freePort();
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const url = `redis://127.0.0.1:${port}`;
    await waitUntil(
      async () => {
        const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        probe.on('error', () => undefined);
        const answered = await probe.ping().then(
          () => true,
          () => false,
        );
        probe.disconnect();
        return answered;
      },
      { what: 'redis-server to answer', timeoutMs: 10_000, intervalMs: 50 },
    );
    service = await startTestService({ env: { REDIS_URL: url } });
    alice = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: alice.username });
  });
  afterAll(async () => {
    redis?.kill('SIGCONT');
    await service?.close();
    redis?.kill('SIGKILL');
  });

  const currentUser = () => service.graphql('{ currentUser { username } }', { token: alice.token });
  const chat = (question = 'How do I parse a URL?') =>
    service.graphql<{ aiAction: { requestId: string; errors: string[] } | null }>(LSP_CHAT_MUTATION, {
      token: alice.token,
      variables: { question, resourceId: null, currentFileContext: null, platformOrigin: 'language_server' },
    });

  it('fails what needs it within seconds instead of waiting, serves what does not, and recovers when Redis answers again', async () => {
    expect((await chat()).body.data?.aiAction?.errors).toEqual([]);
    redis.kill('SIGSTOP');
    try {
      // The rate limit cannot be read: the request goes through, as the limiter's rule says.
      expect((await currentUser()).body).toEqual({ data: { currentUser: { username: alice.username } } });
      // The answer cannot be queued: an error the client can show, not a request that never ends.
      const stalled = await chat('Asked while Redis was away');
      expect(stalled.body.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      redis.kill('SIGCONT');
    }
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
});
