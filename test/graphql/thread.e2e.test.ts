import { userWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';

const DELETE =
  'mutation($id: AiConversationThreadID!) { deleteConversationThread(input: { threadId: $id, clientMutationId: "m1" }) { success errors ' +
  'clientMutationId } }';

describe('deleteConversationThread', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  it("deletes the user's own thread with its messages", async () => {
    const owner = await userWithToken(service.prisma);
    const thread = await service.prisma.aiConversationThread.create({ data: { userId: owner.id, conversationType: 'duo_chat' } });
    await service.prisma.aiMessage.create({
      data: {
        id: crypto.randomUUID(),
        userId: owner.id,
        threadId: thread.id,
        requestId: crypto.randomUUID(),
        role: 'user',
        content: 'hello',
      },
    });
    const { body } = await service.graphql(DELETE, {
      variables: { id: `gid://gitlab/Ai::Conversation::Thread/${thread.id}` },
      token: owner.token,
    });
    expect(body).toEqual({ data: { deleteConversationThread: { success: true, errors: [], clientMutationId: 'm1' } } });
    expect(await service.prisma.aiMessage.count({ where: { threadId: thread.id } })).toBe(0);
  });

  it("answers for another user's thread exactly as for a missing one, and keeps it", async () => {
    const owner = await userWithToken(service.prisma);
    const intruder = await userWithToken(service.prisma);
    const thread = await service.prisma.aiConversationThread.create({ data: { userId: owner.id, conversationType: 'duo_chat' } });
    const theirs = await service.graphql(DELETE, {
      variables: { id: `gid://gitlab/Ai::Conversation::Thread/${thread.id}` },
      token: intruder.token,
    });
    const missing = await service.graphql(DELETE, {
      variables: { id: 'gid://gitlab/Ai::Conversation::Thread/987654321' },
      token: intruder.token,
    });
    expect(theirs.body.errors?.[0]).toMatchObject({ message: 'Thread not found. It may have expired.', extensions: { code: 'NOT_FOUND' } });
    expect(theirs.body.errors?.[0]?.message).toBe(missing.body.errors?.[0]?.message);
    expect(await service.prisma.aiConversationThread.count({ where: { id: thread.id } })).toBe(1);
  });

  it('names a wrong id type', async () => {
    const owner = await userWithToken(service.prisma);
    const { body } = await service.graphql(DELETE, { variables: { id: 'gid://gitlab/Project/1' }, token: owner.token });
    expect(body.errors?.[0]?.message).toContain('does not represent an instance of Ai::Conversation::Thread');
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
