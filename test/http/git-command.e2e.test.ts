import { groupWithSeat, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';

const REFUSED = '400 Bad request - AI features are not enabled or resource is not permitted to be sent.';
// What a model answers, as GitLab's prompt asks: the commands in ``` blocks, each explained.
const ANSWER = ['```\ngit log -10 --format=%s\n```\n\n', 'This command lists the titles of the last 10 commits.'];

// `glab duo ask how to list last 10 commit titles` (gitlab-org/cli internal/commands/duo/ask/ask.go): it POSTs
// {prompt, model: "vertexai"} to /api/v4/ai/llm/git_command and reads predictions[0].candidates[0].content.
describe('POST /api/v4/ai/llm/git_command (glab duo ask)', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let alice: UserWithToken;

  beforeAll(async () => {
    stub = await startStubLlmServer({ defaultBehaviour: { kind: 'stream', pieces: ANSWER } });
    service = await startTestService({ env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub' } });
    alice = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: alice.username });
  });
  afterAll(async () => {
    await service?.close();
    await stub?.close();
  });

  const ask = async (body: unknown, token: string | null = alice.token, target: TestService = service) => {
    const response = await fetch(`${target.url}/api/v4/ai/llm/git_command`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { 'private-token': token } : {}) },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };

  it("answers glab's request with the model's commands in Vertex AI's shape, asked with GitLab's prompt", async () => {
    stub.reset();
    expect(await ask({ prompt: 'how to list last 10 commit titles', model: 'vertexai' })).toEqual({
      status: 201,
      body: { predictions: [{ candidates: [{ author: '1', content: ANSWER.join('') }] }] },
    });
    const sent = stub.requests[0].body;
    expect(sent.messages).toEqual([
      { role: 'user', content: expect.stringContaining('Provide the appropriate git commands for: how to list last 10 commit titles.') },
    ]);
    expect(String(sent.messages![0].content)).toContain('Respond with git commands wrapped in separate ``` blocks.');
    expect({ temperature: sent.temperature, max_tokens: sent.max_tokens }).toEqual({ temperature: 0.4, max_tokens: 300 });
  });

  it('refuses, as GitLab does, what it may not answer, and asks the model nothing', async () => {
    stub.reset();
    const reader = await userWithToken(service.prisma, { scopes: ['read_api'] });
    const seatless = await userWithToken(service.prisma);
    expect(await ask({ prompt: 'undo my last commit' }, null)).toEqual({ status: 401, body: { message: '401 Unauthorized' } });
    expect(await ask({ prompt: 'undo my last commit' }, reader.token)).toMatchObject({
      status: 403,
      body: { error: 'insufficient_scope', scope: 'api' },
    });
    expect(await ask({ prompt: 'undo my last commit' }, seatless.token)).toEqual({ status: 400, body: { message: REFUSED } });
    // GitLab's Llm::GitCommandService takes a prompt under 300 characters.
    expect(await ask({ prompt: 'x'.repeat(300) })).toEqual({ status: 400, body: { message: REFUSED } });
    expect((await ask({ prompt: 'x'.repeat(299) })).status).toBe(201);
    stub.reset();
    expect(await ask({ model: 'vertexai' })).toEqual({ status: 400, body: { error: 'prompt is missing', field: 'prompt' } });
    expect(await ask({ prompt: ['git'] })).toEqual({ status: 400, body: { error: 'prompt is invalid', field: 'prompt' } });
    expect(stub.requests).toHaveLength(0);
  });

  it('says the model did not answer with a 503, and that there is none with the refusal', async () => {
    stub.script({ kind: 'status', status: 400 });
    expect(await ask({ prompt: 'undo my last commit' })).toEqual({ status: 503, body: { message: '503 Service Unavailable' } });
    const withoutModel = await startTestService();
    try {
      const bob = await userWithToken(withoutModel.prisma);
      await groupWithSeat(withoutModel.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: bob.username });
      expect(await ask({ prompt: 'undo my last commit' }, bob.token, withoutModel)).toEqual({ status: 400, body: { message: REFUSED } });
    } finally {
      await withoutModel.close();
    }
  });
});
