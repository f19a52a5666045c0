import type { Page } from 'playwright-core';
import { DEMO, seedDemo } from '../../src/demo/seed-demo';
import { createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';
import { builtChatPage, launchBrowser, type TestBrowser } from '../helpers/web-page';

// A repository large enough that its first index spans several of the page's polls on an idle
// machine (it writes its progress every 200 files: 0, 200, … of 902), small enough to be waited for
// on a loaded one (the chat waits up to 90 s for it here).
const FILES: Record<string, string> = {
  'README.md': '# shop\n\nA small shop service.\n',
  'src/billing/tax.ts': `/** Computes value-added tax for an invoice line. */
export function computeVatAmount(netAmount: number, ratePercent: number): number {
  return Math.round(netAmount * ratePercent) / 100;
}
`,
  ...Object.fromEntries(
    Array.from({ length: 900 }, (_unused, index) => [
      `src/catalog/item-${index}.ts`,
      `/** Catalog item ${index}. */\nexport function describeItem${index}(name: string): string {\n` +
        `  return \`item ${index}: \${name}\`;\n}\n`,
    ]),
  ),
};

const MESSAGES = '[data-testid="chat-history"] .duo-chat-message-container';
const STEP_MS = 180_000;

// A new user's first minute: a fresh service, sign in, the demo project picked with "The whole
// repository", a question at once. The answer waits for the first index (streaming how far it is),
// then cites the code; the index panel follows the run to "ready" without a reload.
describe('the first question on a fresh service, in a browser', () => {
  let stub: StubLlmServer;
  let service: TestService;
  let repo: GitRepo;
  let browser: TestBrowser;
  let page: Page;
  let token: string;

  beforeAll(async () => {
    const pageDir = await builtChatPage();
    stub = await startStubLlmServer({
      defaultBehaviour: { kind: 'stream', pieces: ['The VAT amount is computed ', 'in `computeVatAmount`.'], delayMs: 300 },
    });
    service = await startTestService({
      role: 'all',
      env: {
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: stub.url,
        LLM_MODEL: 'stub',
        INDEX_DEBOUNCE_MS: '0',
        CHAT_INDEX_WAIT_MS: '90000',
        DUO_CHAT_DIR: pageDir,
      },
    });
    repo = createGitRepo(FILES);
    token = (await seedDemo(service.prisma)).token;
    await service.prisma.project.update({ where: { fullPath: DEMO.project }, data: { repositoryUrl: repo.path } });
    browser = await launchBrowser(service.url);
    page = await browser.context.newPage();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await stub?.close();
    repo?.destroy();
  });

  afterEach(() => {
    expect(browser.foreignRequests).toEqual([]);
  });

  it(
    'answers with code citations at once, and the index panel follows the run to ready',
    async () => {
      await page.goto(`${service.url}/-/duo-chat`);
      await page.getByLabel('Personal access token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Signed in as demo').waitFor();
      await page.getByLabel('Project').selectOption(DEMO.project);
      const state = page.getByTestId('index-state');
      await state.getByText('not indexed').waitFor();
      expect(await service.prisma.codeIndex.count()).toBe(0);
      // Everything the panel and the answer show from here on, as it changes (the page is never reloaded).
      await page.evaluate(`(() => {
        const seen = [];
        window.seen = seen;
        const record = () => {
          const panel = document.querySelector('[data-testid="index-state"]')?.textContent ?? '';
          const history = document.querySelector('[data-testid="chat-history"]')?.textContent ?? '';
          seen.push(panel + '\\n' + history);
        };
        new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
      })()`);

      await page.getByText('The whole repository', { exact: true }).click();
      const prompt = page.locator('textarea[data-testid="chat-prompt-input"], [data-testid="chat-prompt-input"] textarea').first();
      await prompt.fill('Where is the VAT amount computed?');
      await prompt.press('Enter');

      const answer = page.locator(MESSAGES).last();
      await answer.getByText('computeVatAmount').waitFor({ timeout: 100_000 });
      await answer
        .getByRole('link', { name: /src\/billing\/tax\.ts:\d+-\d+/ })
        .first()
        .waitFor();
      expect(await answer.innerText()).not.toMatch(/indexing has started|still being indexed/);
      await state.getByText('ready', { exact: true }).waitFor({ timeout: 30_000 });
      const index = await service.prisma.codeIndex.findFirstOrThrow({ where: { project: { fullPath: DEMO.project } } });
      expect(index.filesIndexed).toBeGreaterThan(900);
      await state.getByText(`${index.filesIndexed} files`, { exact: false }).waitFor();

      const seen = await page.evaluate<string[]>('window.seen');
      // The panel went from indexing (or queued) to ready by itself, showing how many files of how many.
      const panel = (text: string) => text.split('\n')[0];
      const firstRunning = seen.findIndex((text) => /\b(pending|indexing)/.test(panel(text)));
      const firstReady = seen.findIndex((text) => /\bready/.test(panel(text)));
      expect(seen.some((text) => /indexing\s*\d+ of \d+ files/.test(panel(text)))).toBe(true);
      expect(firstRunning).toBeGreaterThanOrEqual(0);
      expect(firstReady).toBeGreaterThan(firstRunning);
      // While the answer waited it said so, in the answer's place.
      expect(seen.some((text) => new RegExp(`(Indexing|Waiting for an indexing worker for) ${DEMO.project}`).test(text))).toBe(true);
      // The model got the code the citation points at.
      expect(String(stub.requests.at(-1)!.body.messages!.at(-1)!.content)).toContain('computeVatAmount');
    },
    STEP_MS,
  );
});
