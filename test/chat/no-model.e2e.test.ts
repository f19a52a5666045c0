import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LSP_CHAT_MUTATION, subscribe, wsClient } from '../helpers/chat-client';
import { groupWithSeat, userWithToken } from '../helpers/fixtures';
import { runCli } from '../helpers/run-cli';
import { startTestService, type TestService } from '../helpers/test-service';

// The default: no LLM_PROVIDER. Chat still answers, saying what to configure.
describe('chat with no model configured', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ role: 'all', env: { GATEKEEPER: 'false' } });
  });
  afterAll(() => service.close());

  it('answers that no language model is configured and how to set one, through the normal stream', async () => {
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    const client = wsClient(service.url, user.token);
    try {
      const clientSubscriptionId = crypto.randomUUID();
      const stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, aiAction: 'CHAT', clientSubscriptionId });
      const { body } = await service.graphql<{ aiAction: { requestId: string } }>(LSP_CHAT_MUTATION, {
        token: user.token,
        variables: {
          question: 'hi',
          clientSubscriptionId,
          platformOrigin: 'vs_code_extension',
          additionalContext: [{ id: 'a.ts', category: 'SNIPPET', content: 'const a = 1;', metadata: {} }],
        },
      });
      const received = await stream.untilFinal(body.data!.aiAction.requestId);
      const final = received.find((message) => message.chunkId === null)!;
      expect(final.content).toMatch(/No language model is configured/);
      expect(final.content).toMatch(/LLM_PROVIDER/);
      expect(final.content).toMatch(/1 context item were received/);
      expect(received.filter((message) => message.chunkId !== null).map((chunk) => chunk.chunkId)).toEqual([1]);

      // Feedback on it is exported with its turn.
      await service.graphql('mutation($id: String!) { duoUserFeedback(input: { aiMessageId: $id, trackingEvent: { category: "chat", action: "thumbs_down" } }) { errors } }', {
        token: user.token,
        variables: { id: final.id },
      });
      const directory = mkdtempSync(path.join(os.tmpdir(), 'duo-export-'));
      try {
        const out = path.join(directory, 'feedback.jsonl');
        const result = await runCli('export-feedback', ['--out', out], { DATABASE_URL: service.running.services.config.databaseUrl! });
        expect(result.stderr).toBe('');
        expect(JSON.parse(result.stdout)).toEqual({ exported: 1, out });
        const [line] = readFileSync(out, 'utf8').trim().split('\n').map((text) => JSON.parse(text));
        expect(line).toMatchObject({ kind: 'chat', event: 'thumbs_down', requestId: body.data!.aiAction.requestId, prompt: 'hi', contextItemIds: ['a.ts'], answer: final.content });
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
      stream.stop();
    } finally {
      await client.dispose();
    }
  });
});
