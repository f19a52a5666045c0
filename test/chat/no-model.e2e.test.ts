import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LSP_CHAT_MUTATION, subscribe, wsClient } from '../helpers/chat-client';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, unique, userWithToken } from '../helpers/fixtures';
import { BILLING_FILES, createGitRepo } from '../helpers/git-repo';
import { runCli } from '../helpers/run-cli';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

// The default: no LLM_PROVIDER. Chat still answers, saying what to configure.
describe('chat with no model configured', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ role: 'all', env: { GATEKEEPER: 'false', INDEX_DEBOUNCE_MS: '0' } });
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
      // The job says what its answer was (its log line too): no model, not "answered".
      const job = await service.running.services.queues.chat.getJob(body.data!.aiAction.requestId);
      await waitUntil(async () => (await job!.isCompleted()) === true, { timeoutMs: 10_000, intervalMs: 50 });
      expect((await service.running.services.queues.chat.getJob(body.data!.aiAction.requestId))!.returnvalue).toEqual({
        outcome: 'no_model',
      });

      // Feedback on it is exported with its turn.
      await service.graphql(
        'mutation($id: String!) { duoUserFeedback(input: { aiMessageId: $id, trackingEvent: { category: "chat", action: "thumbs_down" } ' +
          '}) { errors } }',
        {
          token: user.token,
          variables: { id: final.id },
        },
      );
      const directory = mkdtempSync(path.join(os.tmpdir(), 'duo-export-'));
      try {
        const out = path.join(directory, 'feedback.jsonl');
        const result = await runCli('export-feedback', ['--out', out], { DATABASE_URL: service.running.services.config.databaseUrl! });
        expect(result.stderr).toBe('');
        expect(JSON.parse(result.stdout)).toEqual({ exported: 1, out });
        const [line] = readFileSync(out, 'utf8')
          .trim()
          .split('\n')
          .map((text) => JSON.parse(text));
        expect(line).toMatchObject({
          kind: 'chat',
          event: 'thumbs_down',
          requestId: body.data!.aiAction.requestId,
          prompt: 'hi',
          contextItemIds: ['a.ts'],
          answer: final.content,
        });
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
      stream.stop();
    } finally {
      await client.dispose();
    }
  });

  it('answers a question with repository context from what code search found: files, lines, snippets and sources', async () => {
    const user = await userWithToken(service.prisma);
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    const repo = createGitRepo(BILLING_FILES);
    const client = wsClient(service.url, user.token);
    try {
      const { project } = await createProject(service.prisma, { fullPath: `${group}/${unique('shop')}`, repository: repo.path });
      await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
      const clientSubscriptionId = crypto.randomUUID();
      const stream = await subscribe(client, { userId: `gid://gitlab/User/${user.id}`, aiAction: 'CHAT', clientSubscriptionId });
      const ask = async (question: string) => {
        const { body } = await service.graphql<{ aiAction: { requestId: string } }>(LSP_CHAT_MUTATION, {
          token: user.token,
          variables: {
            question,
            clientSubscriptionId,
            platformOrigin: 'vs_code_extension',
            additionalContext: [{ id: project.fullPath, category: 'REPOSITORY', content: '', metadata: {} }],
          },
        });
        expect(body.errors).toBeUndefined();
        const received = await stream.untilFinal(body.data!.aiAction.requestId, 20_000);
        return received.find((message) => message.chunkId === null)!;
      };
      // Not indexed yet: the answer waits for the first run, as with a model, and shows what search found.
      expect((await ask('Where is the VAT amount computed?')).content).toMatch(
        /^No language model is configured, so this is what code search found/,
      );

      const final = await ask('Where is the VAT amount computed for an invoice line?');
      expect(final.content).toMatch(/^No language model is configured, so this is what code search found/);
      expect(final.content).toContain(`**${project.fullPath.replace('/', '\\/')} \\(main, commit ${repo.head().slice(0, 12)}\\)**`);
      expect(final.content).toMatch(/1\. `src\/billing\/tax\.ts` \(lines 1–4\)/);
      expect(final.content).toContain('export function computeVatAmount(netAmount: number, ratePercent: number): number {');
      expect(final.content).toContain('```typescript');
      expect(final.content).toMatch(/LLM_PROVIDER/);
      const sources = final.extras!.sources as Array<{ path: string; startLine: number; endLine: number; commitSha: string }>;
      expect(sources[0]).toMatchObject({ path: 'src/billing/tax.ts', startLine: 1, endLine: 4, commitSha: repo.head() });

      // A directory small enough to be given whole is listed whole.
      const { body } = await service.graphql<{ aiAction: { requestId: string } }>(LSP_CHAT_MUTATION, {
        token: user.token,
        variables: {
          question: 'What do these do?',
          clientSubscriptionId,
          platformOrigin: 'vs_code_extension',
          additionalContext: [{ id: 'src/billing', category: 'DIRECTORY', content: '', metadata: { projectPath: project.fullPath } }],
        },
      });
      const whole = (await stream.untilFinal(body.data!.aiAction.requestId, 20_000)).find((message) => message.chunkId === null)!;
      expect(whole.content).toContain('`src/billing/discount.ts`');
      expect(whole.content).toContain('`src/billing/tax.ts`');
      stream.stop();
    } finally {
      await client.dispose();
      repo.destroy();
    }
  });
});
