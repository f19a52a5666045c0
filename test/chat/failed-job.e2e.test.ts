import { LSP_CHAT_MUTATION, subscribe, wsClient } from '../helpers/chat-client';
import { groupWithSeat, userWithToken } from '../helpers/fixtures';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';

// A chat job that fails every attempt (here the database refuses the model's answer each time, as a
// full disk or a broken constraint would): the question still ends with GitLab's error answer,
// stored and sent to the client's subscription, instead of a subscription that waits forever.
describe('a chat job that fails all its attempts', () => {
  let stub: StubLlmServer;
  let service: TestService;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'stream', pieces: ['Refused ', 'answer.'] } });
    service = await startTestService({
      role: 'all',
      env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub', GATEKEEPER: 'false' },
    });
    await service.prisma.$executeRawUnsafe(
      `CREATE FUNCTION refuse_model_answer() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.role::text = 'assistant' AND NEW.content LIKE 'Refused answer%' THEN RAISE EXCEPTION 'the answer cannot be stored'; END IF;
         RETURN NEW;
       END $$`,
    );
    await service.prisma.$executeRawUnsafe(
      'CREATE TRIGGER refuse_model_answer BEFORE INSERT ON ai_messages FOR EACH ROW EXECUTE FUNCTION refuse_model_answer()',
    );
  });
  afterAll(async () => {
    await service?.close();
    await stub?.close();
  });

  it('answers the question with A9999 once the last attempt failed, on the subscription and in the history', async () => {
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    const client = wsClient(service.url, user.token);
    try {
      const clientSubscriptionId = crypto.randomUUID();
      const stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, aiAction: 'CHAT', clientSubscriptionId });
      const { body } = await service.graphql<{ aiAction: { requestId: string } }>(LSP_CHAT_MUTATION, {
        token: user.token,
        variables: { question: 'what does this do?', clientSubscriptionId, platformOrigin: 'vs_code_extension' },
      });
      const requestId = body.data!.aiAction.requestId;
      const received = await stream.untilFinal(requestId, 30_000);
      const final = received.find((message) => message.chunkId === null)!;
      expect(final.errors).toEqual([expect.stringContaining('A9999')]);
      // Each of the queue's three attempts asked the model, and each answer was refused.
      expect(stub.requests.length).toBe(3);
      const answers = await service.prisma.aiMessage.findMany({ where: { requestId, role: 'assistant' } });
      expect(answers.map((answer) => answer.errors)).toEqual([[expect.stringContaining('A9999')]]);
      stream.stop();
    } finally {
      await client.dispose();
    }
  }, 60_000);
});
