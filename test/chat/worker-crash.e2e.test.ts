import type { ChildProcess } from 'node:child_process';
import { LSP_CHAT_MUTATION, subscribe, wsClient } from '../helpers/chat-client';
import { groupWithSeat, userWithToken } from '../helpers/fixtures';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { spawnWorker } from '../helpers/worker-process';
import { startTestService, type TestService } from '../helpers/test-service';

// A worker process killed in the middle of an answer: another worker takes the job over and the
// request still gets exactly one stored answer.
describe('a chat worker killed mid-answer', () => {
  let stub: StubLlmServer;
  let api: TestService;
  let env: Record<string, string>;
  const workers: ChildProcess[] = [];

  const startWorker = () => {
    const child = spawnWorker(env);
    workers.push(child);
    return child;
  };

  beforeAll(async () => {
    stub = await startStubLlmServer();
    const llm = { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub', GATEKEEPER: 'false' };
    api = await startTestService({ role: 'api', env: llm });
    env = {
      ...llm,
      DATABASE_URL: api.running.services.config.databaseUrl!,
      REDIS_PREFIX: api.redisPrefix,
      DATA_DIR: api.running.services.config.dataDir,
      LOG_LEVEL: 'warn',
      JOB_LOCK_MS: '1000',
    };
  });
  afterAll(async () => {
    for (const worker of workers) worker.kill('SIGKILL');
    await api?.close();
    await stub?.close();
  });

  it('is taken over by another worker, and the request has one answer', async () => {
    stub.script({ kind: 'stream', pieces: Array.from({ length: 30 }, (_value, index) => `part${index} `), delayMs: 100 });
    const user = await userWithToken(api.prisma);
    await groupWithSeat(api.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    const client = wsClient(api.url, user.token);
    try {
      const clientSubscriptionId = crypto.randomUUID();
      const stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, aiAction: 'CHAT', clientSubscriptionId });
      const first = startWorker();
      const { body } = await api.graphql<{ aiAction: { requestId: string } }>(LSP_CHAT_MUTATION, {
        token: user.token,
        variables: { question: 'survive a crash', clientSubscriptionId, platformOrigin: 'vs_code_extension' },
      });
      const requestId = body.data!.aiAction.requestId;
      await stream.until((messages) => messages.filter((message) => message.requestId === requestId).length >= 3, 20_000);
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));

      startWorker();
      const received = await stream.untilFinal(requestId, 25_000);
      const final = received.find((message) => message.chunkId === null)!;
      expect(final.errors).toEqual([]);
      expect(final.content).toBe('Hello from the stub.');
      expect(stub.requests.length).toBe(2);
      expect(await api.prisma.aiMessage.count({ where: { requestId, role: 'assistant' } })).toBe(1);
      stream.stop();
    } finally {
      await client.dispose();
    }
  }, 60_000);

  it('answers with the A9999 error when the job stalled more often than allowed (each worker died mid-answer)', async () => {
    // Only this test's workers: the one left from the test before would take the job over.
    for (const worker of workers) worker.kill('SIGKILL');
    const slow = { kind: 'stream' as const, pieces: Array.from({ length: 30 }, (_value, index) => `part${index} `), delayMs: 100 };
    stub.script(slow, slow);
    const user = await userWithToken(api.prisma);
    await groupWithSeat(api.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    const client = wsClient(api.url, user.token);
    try {
      const clientSubscriptionId = crypto.randomUUID();
      const stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, aiAction: 'CHAT', clientSubscriptionId });
      let worker = startWorker();
      const { body } = await api.graphql<{ aiAction: { requestId: string } }>(LSP_CHAT_MUTATION, {
        token: user.token,
        variables: { question: 'die twice', clientSubscriptionId, platformOrigin: 'vs_code_extension' },
      });
      const requestId = body.data!.aiAction.requestId;
      for (const streamed of [3, 6]) {
        await stream.until((messages) => messages.filter((message) => message.requestId === requestId).length >= streamed, 20_000);
        worker.kill('SIGKILL');
        await new Promise((resolve) => worker.once('exit', resolve));
        worker = startWorker();
      }
      const received = await stream.untilFinal(requestId, 25_000);
      const final = received.find((message) => message.chunkId === null)!;
      expect(final.errors).toEqual([expect.stringContaining('A9999')]);
      expect(await api.prisma.aiMessage.count({ where: { requestId, role: 'assistant' } })).toBe(1);
      stream.stop();
    } finally {
      await client.dispose();
    }
  }, 60_000);
});
