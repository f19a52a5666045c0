import type { ChildProcess } from 'node:child_process';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { NOT_AVAILABLE } from '../../src/errors';
import { subscribe, wsClient } from '../helpers/chat-client';
import { groupWithSeat, unique, userWithToken } from '../helpers/fixtures';
import { BILLING_FILES, createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';
import { spawnWorker } from '../helpers/worker-process';

const CHAT = `mutation($question: String!, $clientSubscriptionId: String, $additionalContext: [AiAdditionalContextInput!]) {
  aiAction(input: { chat: { content: $question, additionalContext: $additionalContext, skipGatekeeper: true }, clientSubscriptionId:
  $clientSubscriptionId, platformOrigin: "vs_code_extension" }) { requestId errors }
}`;

// Threat: read_code checked only when the question is asked. The answer is made later, by a worker
// (another process); a user demoted to Guest in between must not get the code in the answer.
describe('read_code is checked again in the chat worker', () => {
  let stub: StubLlmServer;
  let api: TestService;
  let repo: GitRepo;
  let env: Record<string, string>;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
    const llm = { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub', GATEKEEPER: 'false', INDEX_DEBOUNCE_MS: '0' };
    api = await startTestService({ role: 'api', env: llm });
    env = {
      ...llm,
      DATABASE_URL: api.running.services.config.databaseUrl!,
      REDIS_PREFIX: api.redisPrefix,
      DATA_DIR: api.running.services.config.dataDir,
      LOG_LEVEL: 'warn',
    };
    repo = createGitRepo(BILLING_FILES);
  });
  afterAll(async () => {
    for (const worker of workers) worker.kill('SIGKILL');
    await api?.close();
    await stub?.close();
    repo?.destroy();
  });

  const stopWorker = async (worker: ChildProcess) => {
    worker.kill('SIGTERM');
    await new Promise((resolve) => worker.once('exit', resolve));
  };

  it('a Reporter demoted to Guest, or blocked, after asking gets no code in the answer', async () => {
    const user = await userWithToken(api.prisma);
    const group = await groupWithSeat(api.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    const project = (
      await createProject(api.prisma, { fullPath: `${group}/${unique('private')}`, repository: repo.path, visibility: 'private' })
    ).project;
    await addMember(api.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'reporter' });
    const client = wsClient(api.url, user.token);
    const clientSubscriptionId = crypto.randomUUID();
    const stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, aiAction: 'CHAT', clientSubscriptionId });
    const ask = async () => {
      const { body } = await api.graphql<{ aiAction: { requestId: string } }>(CHAT, {
        token: user.token,
        variables: {
          question: 'Where is the VAT amount computed?',
          clientSubscriptionId,
          additionalContext: [{ category: 'REPOSITORY', id: project.fullPath, content: '', metadata: {} }],
        },
      });
      expect(body.errors).toBeUndefined();
      return body.data!.aiAction.requestId;
    };
    try {
      // A worker builds the index (started as a search would start it: a first chat question would answer with the code,
      // which would then be in the conversation's history, legitimately, for the question below).
      const first = spawnWorker(env);
      workers.push(first);
      await api.running.services.queues.enqueueIndex({ projectId: project.id, ref: 'main', reason: 'api' });
      const started = Date.now();
      while ((await api.prisma.codeIndex.findFirst({ where: { projectId: project.id } }))?.state !== 'ready') {
        if (Date.now() - started > 60_000) throw new Error('index never ready');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await stopWorker(first);

      // Asked as a Reporter (accepted), answered after the demotion.
      const requestId = await ask();
      await api.prisma.projectMember.updateMany({ where: { projectId: project.id, userId: user.id }, data: { accessLevel: 10 } });
      const calls = stub.requests.length;
      const second = spawnWorker(env);
      workers.push(second);
      const final = (await stream.untilFinal(requestId, 90_000)).find((message) => message.chunkId === null)!;
      const prompts = stub.requests.slice(calls).map((request) => JSON.stringify(request.body));
      expect(final.content).not.toContain('computeVatAmount');
      for (const prompt of prompts) expect(prompt).not.toContain('computeVatAmount');
      expect([final.content, ...prompts].join('\n')).toContain(NOT_AVAILABLE);
      await stopWorker(second);

      // Asked as a Reporter again, answered after the user was blocked (by an admin, behind the API's back): no code
      // reaches the model either. (Their sockets are closed: the stored answer is read instead.)
      await api.prisma.projectMember.updateMany({ where: { projectId: project.id, userId: user.id }, data: { accessLevel: 20 } });
      const blockedId = await ask();
      await api.prisma.user.update({ where: { id: user.id }, data: { state: 'blocked' } });
      const callsBefore = stub.requests.length;
      workers.push(spawnWorker(env));
      const startedAnswer = Date.now();
      while (!(await api.prisma.aiMessage.findFirst({ where: { requestId: blockedId, role: 'assistant' } }))) {
        if (Date.now() - startedAnswer > 60_000) throw new Error('never answered');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const blockedPrompts = stub.requests.slice(callsBefore).map((request) => JSON.stringify(request.body));
      for (const prompt of blockedPrompts) expect(prompt).not.toContain('computeVatAmount');
    } finally {
      stream.stop();
      await client.dispose();
    }
  }, 240_000);
});
