import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { DEMO, seedDemo } from '../../src/demo/seed-demo';
import { PROJECT_ROOT } from '../../src/paths';
import { createToken, revokeToken } from '../../src/users/users.service';
import { groupWithSeat, userWithToken } from '../helpers/fixtures';
import { createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';
import { builtChatPage, launchBrowser, type TestBrowser } from '../helpers/web-page';

// A small stand-in for the demo project's code: the question the README asks has its answer here.
const DEMO_FILES: Record<string, string> = {
  'README.md': '# shop\n\nA small shop service.\n',
  'src/webhooks/verify-push-token.ts': `import { timingSafeEqual } from 'node:crypto';

/** Checks the secret token GitLab sends with a push webhook (X-Gitlab-Token). */
export function verifyPushWebhookToken(expected: string, received: string | undefined): boolean {
  if (!received) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(received);
  return a.length === b.length && timingSafeEqual(a, b);
}
`,
  'src/webhooks/push-handler.ts': `import { verifyPushWebhookToken } from './verify-push-token';

export function handlePush(secret: string, headers: Record<string, string>, body: unknown) {
  if (!verifyPushWebhookToken(secret, headers['x-gitlab-token'])) throw new Error('invalid webhook token');
  return { queued: true, body };
}
`,
  'src/billing/tax.ts': `/** Computes value-added tax for an invoice line. */
export function computeVatAmount(netAmount: number, ratePercent: number): number {
  return Math.round(netAmount * ratePercent) / 100;
}
`,
};

// Screenshots go to docs/ when DUO_CHAT_SCREENSHOTS=docs (to refresh the pictures in docs/chat-page.md), else to a temporary directory.
const SHOTS_DIR =
  process.env.DUO_CHAT_SCREENSHOTS === 'docs'
    ? path.join(PROJECT_ROOT, 'docs', 'images')
    : mkdtempSync(path.join(os.tmpdir(), 'duo-shots-'));

// duo-ui's message containers in the chat history.
const MESSAGES = '[data-testid="chat-history"] .duo-chat-message-container';

// Each step drives a browser against the service and its worker: more than jest's default 30 s on a loaded machine.
const STEP_MS = 90_000;

type Source = { path: string; startLine: number; endLine: number };

// The chat page in a real browser (Debian's chromium) against the real service: GraphQL over HTTP,
// graphql-ws streaming, the worker, the index and the stub model; nothing but the service is reached.
describe('the /-/duo-chat page in a browser', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let repo: GitRepo;
  let browser: TestBrowser;
  let page: Page;
  let token: string;

  beforeAll(async () => {
    const pageDir = await builtChatPage();
    // Pieces half a second apart: the page is seen with part of the answer, however loaded the machine.
    stub = await startStubLlmServer({
      defaultBehaviour: {
        kind: 'stream',
        pieces: ['The push webhook token ', 'is checked in ', '`verifyPushWebhookToken`.'],
        delayMs: 500,
      },
    });
    service = await startTestService({
      role: 'all',
      env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub', INDEX_DEBOUNCE_MS: '0', DUO_CHAT_DIR: pageDir },
    });
    repo = createGitRepo(DEMO_FILES);
    token = (await seedDemo(service.prisma)).token;
    await service.prisma.project.update({ where: { fullPath: DEMO.project }, data: { repositoryUrl: repo.path } });
    browser = await launchBrowser(service.url);
    page = await browser.context.newPage();
    mkdirSync(SHOTS_DIR, { recursive: true });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await stub?.close();
    repo?.destroy();
    if (process.env.DUO_CHAT_SCREENSHOTS !== 'docs') rmSync(SHOTS_DIR, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(browser.foreignRequests).toEqual([]);
  });

  const promptInput = () => page.locator('textarea[data-testid="chat-prompt-input"], [data-testid="chat-prompt-input"] textarea').first();
  const lastAnswer = () => page.locator(MESSAGES).last();
  /** The line numbers a file view marks as cited. */
  const citedLines = (view: Locator) =>
    view.locator('.duo-file-line.is-cited').evaluateAll((lines) => lines.map((line) => Number(line.getAttribute('data-line'))));

  it(
    'says clearly when a token is not accepted',
    async () => {
      await page.goto(`${service.url}/-/duo-chat`);
      await page.getByLabel('Personal access token').fill('glpat-wrongwrongwrongwrong');
      await page.getByLabel('Personal access token').press('Enter');
      await page.getByText('This token was not accepted').waitFor();
      expect(await page.evaluate('window.sessionStorage.length')).toBe(0);
      await page.screenshot({ path: path.join(SHOTS_DIR, 'duo-chat-sign-in.png') });
    },
    STEP_MS,
  );

  it(
    'signs in, picks the demo project and indexes it with a progress bar',
    async () => {
      await page.getByLabel('Personal access token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Signed in as demo').waitFor();
      await page.getByLabel('Project').selectOption(DEMO.project);
      expect(await page.getByLabel('Project').inputValue()).toBe(DEMO.project);
      const state = page.getByTestId('index-state');
      await state.getByText('not indexed').waitFor();
      await page.getByTestId('index-button').click();
      await state.getByText('ready', { exact: true }).waitFor({ timeout: 30_000 });
      await state.getByText('4 files').waitFor();
    },
    STEP_MS,
  );

  it(
    'streams an answer with repository context and opens a citation at its lines',
    async () => {
      await page.getByText('The whole repository', { exact: true }).click();
      const prompt = promptInput();
      await prompt.fill('where is the push webhook token checked?');
      await prompt.press('Enter');
      // Streamed: the first piece shows before the last one arrived.
      await lastAnswer().getByText('The push webhook token').waitFor();
      expect(await lastAnswer().innerText()).not.toContain('verifyPushWebhookToken');
      await lastAnswer().getByText('verifyPushWebhookToken').waitFor();
      const citation = lastAnswer().getByRole('link', { name: /src\/webhooks\/verify-push-token\.ts:\d+-\d+/ });
      await citation.first().waitFor();
      // The model was given the code found by the Semantic Search Tool over the index.
      expect(String(stub.requests.at(-1)!.body.messages!.at(-1)!.content)).toContain('verifyPushWebhookToken');
      await page.screenshot({ path: path.join(SHOTS_DIR, 'duo-chat-answer.png') });

      const stored = await service.prisma.aiMessage.findFirst({ where: { role: 'assistant' }, orderBy: { createdAt: 'desc' } });
      const source = (stored!.extras as { sources: Source[] }).sources.find((item) => item.path === 'src/webhooks/verify-push-token.ts')!;
      await citation.first().click();
      const view = page.getByTestId('file-view');
      await view.getByRole('heading', { name: 'src/webhooks/verify-push-token.ts' }).waitFor();
      await view.locator('.duo-file-line.is-cited').first().waitFor();
      const cited = await citedLines(view);
      expect(cited[0]).toBe(source.startLine);
      expect(cited.at(-1)).toBe(source.endLine);
      expect(await view.locator('.duo-file-line').nth(3).innerText()).toContain('export function verifyPushWebhookToken');
      await page.screenshot({ path: path.join(SHOTS_DIR, 'duo-chat-file-view.png') });
      await view.getByTestId('file-view-close').click();
      await view.waitFor({ state: 'detached' });
    },
    STEP_MS,
  );

  it(
    "opens a GitLab blob URL (a search result's file_url) in the file view, at its line anchor",
    async () => {
      // What REST semantic search and MCP give as a result's file_url.
      const search = await fetch(
        `${service.url}/api/v4/projects/${encodeURIComponent(DEMO.project)}/search/semantic?q=push+webhook+token`,
        {
          headers: { authorization: `Bearer ${token}` },
        },
      );
      const { results } = (await search.json()) as { results: Array<{ path: string; file_url: string }> };
      const fileUrl = results.find((result) => result.path === 'src/webhooks/verify-push-token.ts')!.file_url;
      expect(fileUrl).toBe(`${service.url}/${DEMO.project}/-/blob/main/src/webhooks/verify-push-token.ts`);
      // In a tab of its own (the page under test keeps its state for the next steps): the link, then sign-in.
      const tab = await browser.context.newPage();
      await tab.goto(`${fileUrl}#L3-5`);
      await tab.getByLabel('Personal access token').fill(token);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      const view = tab.getByTestId('file-view');
      await view.getByRole('heading', { name: 'src/webhooks/verify-push-token.ts' }).waitFor();
      await view.locator('.duo-file-line.is-cited').first().waitFor();
      const cited = await citedLines(view);
      expect(cited).toEqual([3, 4, 5]);
      expect(new URL(tab.url()).pathname).toBe('/-/duo-chat');
      await tab.close();
    },
    STEP_MS,
  );

  it(
    'asks about a directory picked from the index',
    async () => {
      await page.getByText('A directory', { exact: true }).click();
      const picker = page.getByLabel('Directory', { exact: true });
      await picker.locator('option', { hasText: 'src/webhooks' }).waitFor({ state: 'attached' });
      expect(await picker.locator('option').allInnerTexts()).toEqual(['Choose a directory', 'src', 'src/billing', 'src/webhooks']);
      // A large repository has many: the filter asks the index for matching ones.
      await page.getByLabel('Filter directories').fill('HOOK');
      await picker.locator('option', { hasText: 'src/billing' }).waitFor({ state: 'detached' });
      expect(await picker.locator('option').allInnerTexts()).toEqual(['Choose a directory', 'src/webhooks']);
      await picker.selectOption('src/webhooks');
      const before = await page.locator(MESSAGES).count();
      const calls = stub.requests.length;
      const prompt = promptInput();
      await prompt.fill('Explain what the webhook code in this directory does');
      await prompt.press('Enter');
      // The question, then its answer.
      await page
        .locator(MESSAGES)
        .nth(before + 1)
        .getByText('verifyPushWebhookToken')
        .waitFor();
      expect(stub.requests.length).toBe(calls + 1);
      const question = String(stub.requests.at(-1)!.body.messages!.at(-1)!.content);
      expect(question).toContain('handlePush');
      expect(question).not.toContain('computeVatAmount');
      await page.getByText('The whole repository', { exact: true }).click();
    },
    STEP_MS,
  );

  it(
    'refuses the file view to a wrong token and for paths outside the index, like GitLab',
    async () => {
      const file = encodeURIComponent('src/webhooks/verify-push-token.ts');
      const url = `${service.url}/api/v4/projects/${encodeURIComponent(DEMO.project)}/repository/files/${file}/raw?ref=main`;
      const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(ok.headers.get('x-gitlab-commit-id')).toBe(repo.head());
      expect(await ok.text()).toContain('timingSafeEqual(a, b)');
      expect((await fetch(url, { headers: { authorization: 'Bearer glpat-wrongwrongwrongwrong' } })).status).toBe(401);
      // Someone with Duo who cannot read the private project gets the answer a missing file gets.
      const outsider = await userWithToken(service.prisma);
      await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: outsider.username });
      const hidden = await fetch(url, { headers: { authorization: `Bearer ${outsider.token}` } });
      expect(hidden.status).toBe(404);
      expect(await hidden.json()).toEqual({ message: '404 Not Found' });
      const missing = await fetch(url.replace('verify-push-token.ts', 'nope.ts'), { headers: { authorization: `Bearer ${token}` } });
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ message: '404 Not Found' });
      const escape = await fetch(
        url.replace(encodeURIComponent('src/webhooks/verify-push-token.ts'), encodeURIComponent('../etc/passwd')),
        { headers: { authorization: `Bearer ${token}` } },
      );
      expect(escape.status).toBe(400);
      // Files the project keeps out of chat context stay out of view too.
      const tax = url.replace(encodeURIComponent('src/webhooks/verify-push-token.ts'), encodeURIComponent('src/billing/tax.ts'));
      expect((await fetch(tax, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      await service.prisma.project.update({ where: { fullPath: DEMO.project }, data: { contextExclusions: ['src/billing/'] } });
      try {
        expect((await fetch(tax, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
      } finally {
        await service.prisma.project.update({ where: { fullPath: DEMO.project }, data: { contextExclusions: [] } });
      }
      // A branch that was never indexed has no files to show.
      expect((await fetch(url.replace('ref=main', 'ref=feature%2Fnone'), { headers: { authorization: `Bearer ${token}` } })).status).toBe(
        404,
      );
    },
    STEP_MS,
  );

  it(
    'lets a newer question supersede an unfinished answer',
    async () => {
      stub.script(
        {
          kind: 'stream',
          pieces: ['First answer starts', ...Array.from({ length: 30 }, (_unused, index) => ` part ${index}`)],
          delayMs: 300,
        },
        { kind: 'stream', pieces: ['Second answer ', 'is complete.'], delayMs: 50 },
      );
      const prompt = promptInput();
      await prompt.fill('Where is the VAT amount computed?');
      await prompt.press('Enter');
      await page.getByText('First answer starts').waitFor();
      // As in GitLab's panel: stop the answer, then ask again; the new request supersedes the old on the server too.
      await page.getByTestId('chat-prompt-cancel-button').click();
      await prompt.fill('Where is the push handler?');
      await prompt.press('Enter');
      await page.getByText('Second answer is complete.').waitFor({ timeout: 20_000 });
      const first = await service.prisma.aiMessage.findFirst({ where: { role: 'user', content: 'Where is the VAT amount computed?' } });
      // The first answer stopped: the model's stream was closed, no final answer was kept, and no more of it reached the page.
      expect(await stub.requests.at(-2)!.ended).toBe('client-closed');
      expect(await service.prisma.aiMessage.findFirst({ where: { requestId: first!.requestId, role: 'assistant' } })).toBeNull();
      expect(await page.getByText('part 25').count()).toBe(0);
    },
    STEP_MS,
  );

  it(
    "stores feedback (GitLab's form: choices and comments) through duoUserFeedback",
    async () => {
      const answer = lastAnswer();
      await answer.hover();
      await answer.getByRole('button', { name: /give feedback/i }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      // GitLab UI's checkbox is a hidden input behind its label. On a loaded machine the modal's
      // opening can swallow a click (seen once in CI): click the label, as a user does, until it is checked.
      const option = dialog.locator('input[type="checkbox"]').first();
      const deadline = Date.now() + 10_000;
      while (!(await option.isChecked()) && Date.now() < deadline) {
        await dialog.locator('label.custom-control-label').first().click();
        if (!(await option.isChecked())) await page.waitForTimeout(200);
      }
      expect(await option.isChecked()).toBe(true);
      await dialog.locator('textarea').nth(0).fill('Asked where the webhook token is checked.');
      await dialog.locator('textarea').nth(1).fill('The answer should name the file.');
      await page.screenshot({ path: path.join(SHOTS_DIR, 'duo-chat-feedback.png') });
      await dialog.getByRole('button', { name: /submit/i }).click();
      await dialog.waitFor({ state: 'detached' });
      const started = Date.now();
      let feedback = await service.prisma.aiMessageFeedback.findMany({ include: { message: true } });
      while (feedback.length === 0 && Date.now() - started < 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        feedback = await service.prisma.aiMessageFeedback.findMany({ include: { message: true } });
      }
      expect(feedback).toHaveLength(1);
      expect(feedback[0].message.role).toBe('assistant');
      expect(feedback[0].message.content).toContain('Second answer is complete.');
      expect(feedback[0].details).toMatchObject({
        category: 'ask_gitlab_chat',
        label: 'response_feedback',
        property: expect.any(String),
        extra: { didWhat: 'Asked where the webhook token is checked.', improveWhat: 'The answer should name the file.' },
      });
    },
    STEP_MS,
  );

  it(
    'shows a gatekeeper question with clickable suggestions, and works on a narrow window',
    async () => {
      const prompt = promptInput();
      await prompt.fill('hmm');
      await prompt.press('Enter');
      const suggestions = page.getByTestId('gatekeeper-suggestions');
      await suggestions.waitFor();
      // The question shows before the answer the gatekeeper gave at once, and the prompt is free again.
      const shown = await page.locator(MESSAGES).allInnerTexts();
      expect(shown.at(-2)).toContain('hmm');
      expect(shown.at(-1)).not.toContain('hmm');
      await page.getByTestId('chat-prompt-submit-button').waitFor();
      await page.screenshot({ path: path.join(SHOTS_DIR, 'duo-chat-gatekeeper.png') });
      const calls = stub.requests.length;
      await suggestions.getByRole('button').first().click();
      await page.locator('[data-testid="chat-history"]').getByText('Explain how this project is structured').waitFor();
      await page.locator(MESSAGES).nth(1).waitFor();
      expect(calls).toBeLessThanOrEqual(stub.requests.length);
      await page.setViewportSize({ width: 420, height: 860 });
      await page.screenshot({ path: path.join(SHOTS_DIR, 'duo-chat-narrow.png') });
      await page.setViewportSize({ width: 1280, height: 800 });
    },
    STEP_MS,
  );

  it(
    'lists threads, switches between them, and signs out',
    async () => {
      await page.getByTestId('new-chat').click();
      await page.locator(MESSAGES).first().waitFor({ state: 'detached', timeout: 5_000 });
      expect(await page.locator('.duo-thread').count()).toBeGreaterThan(0);
      await page.locator('.duo-thread').first().click();
      // Exact: the empty state's predefined prompt says the same words with a capital W, and it can
      // still be on the page (leaving) when the thread's history arrives.
      await page.locator('[data-testid="chat-history"]').getByText('where is the push webhook token checked?', { exact: true }).waitFor();
      // /clear empties the conversation, on the page and on the server.
      const prompt = promptInput();
      await prompt.fill('/clear');
      await prompt.press('Enter');
      await page.locator(MESSAGES).first().waitFor({ state: 'detached', timeout: 5_000 });
      await page.getByTestId('sign-out').click();
      await page.getByLabel('Personal access token').waitFor();
      expect(await page.evaluate('window.sessionStorage.length')).toBe(0);
    },
    STEP_MS,
  );

  it(
    'ends the session with a clear message when the token is revoked while signed in',
    async () => {
      const { token: second } = await createToken(service.prisma, { username: DEMO.username, name: 'second', scopes: ['api'] });
      await page.getByLabel('Personal access token').fill(second);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Signed in as demo').waitFor();
      await page.getByTestId('index-state').getByText('ready', { exact: true }).waitFor();
      await revokeToken(service.prisma, { token: second });
      await page.getByTestId('index-button').click();
      await page.getByText('Your session ended').waitFor();
      expect(await page.evaluate('window.sessionStorage.length')).toBe(0);
    },
    STEP_MS,
  );
});
