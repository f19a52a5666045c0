import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';

const MESSAGE = 'This endpoint has been requested too many times. Try again later.';
const CHAT = 'mutation($q: String!) { aiAction(input: { chat: { content: $q } }) { requestId errors } }';
const MESSAGES = '{ aiMessages { nodes { requestId role } } }';
const EIGHT_HOURS = 8 * 60 * 60;

// GitLab's ai_action limit (its ai_action_api_rate_limit setting, 160 per user per 8 hours): the aiAction
// mutation checks it before anything else (Mutations::Ai::Action#verify_rate_limit!), and so does
// POST /api/v4/ai/llm/git_command (check_rate_limit!(:ai_action)). One budget for both (mutations come over HTTP only).
describe('AI_ACTION_RATE_LIMIT', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let alice: UserWithToken;
  let bob: UserWithToken;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'stream', pieces: ['Use ', 'git log.'] } });
    service = await startTestService({
      env: { AI_ACTION_RATE_LIMIT: '3', LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub' },
    });
    alice = await userWithToken(service.prisma);
    bob = await userWithToken(service.prisma);
    for (const user of [alice, bob]) await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
  });
  afterAll(async () => {
    await service?.close();
    await stub?.close();
  });

  const askGit = async (user: UserWithToken) => {
    const response = await fetch(`${service.url}/api/v4/ai/llm/git_command`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': user.token },
      body: JSON.stringify({ prompt: 'how to list last 10 commit titles', model: 'vertexai' }),
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() };
  };

  it('spends one budget over aiAction and glab duo ask, an action at a time, then refuses both, storing nothing', async () => {
    const first = await service.graphql(CHAT, { token: alice.token, variables: { q: 'How do I undo a commit?' } });
    expect(first.body.errors).toBeUndefined();
    expect((await askGit(alice)).status).toBe(201);
    // Two actions in one document take two: the first is the budget's last, the second is refused.
    const both = await service.graphql<Record<string, { requestId: string } | null>>(
      'mutation { a: aiAction(input: { chat: { content: "How do I rename a branch?" } }) { requestId } ' +
        'b: aiAction(input: { chat: { content: "How do I delete a tag?" } }) { requestId } }',
      { token: alice.token },
    );
    expect(both.body.data?.a?.requestId).toEqual(expect.any(String));
    expect(both.body.data?.b).toBeNull();
    expect(both.body.errors).toEqual([expect.objectContaining({ message: MESSAGE, path: ['b'], extensions: { code: 'RATE_LIMITED' } })]);

    const refused = await service.graphql(CHAT, { token: alice.token, variables: { q: 'How do I squash commits?' } });
    expect(refused.body).toMatchObject({ data: { aiAction: null }, errors: [{ message: MESSAGE, extensions: { code: 'RATE_LIMITED' } }] });
    const git = await askGit(alice);
    expect(git).toMatchObject({ status: 429, body: { message: { error: MESSAGE } } });
    expect(Number(git.retryAfter)).toBeGreaterThan(EIGHT_HOURS - 60);
    expect(Number(git.retryAfter)).toBeLessThanOrEqual(EIGHT_HOURS);

    // Only the two questions let through were stored; the refused ones wrote nothing.
    const stored = await service.graphql<{ aiMessages: { nodes: Array<{ role: string }> } }>(MESSAGES, { token: alice.token });
    expect(stored.body.data!.aiMessages.nodes.filter((node) => node.role === 'USER')).toHaveLength(2);
    // The limit is per user.
    expect((await service.graphql(CHAT, { token: bob.token, variables: { q: 'How do I undo a commit?' } })).body.errors).toBeUndefined();
  });
});
