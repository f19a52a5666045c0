/**
 * Chat page figures (prints them; never passes or fails on time).
 *
 *   node -r @swc-node/register bench/chat-page.ts [runs=5]
 *
 * Builds the page (as the browser test does), then reports:
 *  1. its size: what a first visit downloads (HTML, the entry script, the styles, the icon sprite
 *     the first screen uses), raw and gzip, and everything Vite wrote (most of it is highlight.js
 *     languages that duo-ui's markdown loads only when a code block needs one);
 *  2. first load in Debian's chromium against the real service, each run in a fresh browser
 *     context (empty cache): navigation to the sign-in form ready, and sign-in to the chat ready
 *     (currentUser, projects, threads, the subscription opened). Medians over `runs`.
 * Stops with a message after 5 minutes.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { seedDemo } from '../src/demo/seed-demo';
import { startTestService } from '../test/helpers/test-service';
import { CHROMIUM_PATH } from '../test/helpers/test-env';
import { builtChatPage } from '../test/helpers/web-page';
import { median } from './lib/figures';

const RUNS = Number(process.argv[2] ?? 5);
const LIMIT_MS = 5 * 60_000;

const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

function sizes(files: string[]): { raw: number; gzip: number } {
  return files.reduce(
    (total, file) => {
      const content = readFileSync(file);
      return { raw: total.raw + content.length, gzip: total.gzip + gzipSync(content).length };
    },
    { raw: 0, gzip: 0 },
  );
}

async function main(): Promise<void> {
  const timer = setTimeout(() => {
    console.error(`chat-page bench: stopped after ${LIMIT_MS / 60_000} minutes`);
    process.exit(1);
  }, LIMIT_MS);
  timer.unref();

  const started = Date.now();
  const dir = await builtChatPage();
  console.log(`build (or cache hit): ${((Date.now() - started) / 1000).toFixed(1)} s -> ${dir}`);
  const assets = readdirSync(path.join(dir, 'assets')).map((name) => path.join(dir, 'assets', name));
  const html = readFileSync(path.join(dir, 'index.html'), 'utf8');
  const linked = [...html.matchAll(/(?:src|href)="\/-\/duo-chat\/(assets\/[^"]+)"/g)].map((match) => path.join(dir, match[1]));
  const firstVisit = [path.join(dir, 'index.html'), ...linked, ...assets.filter((file) => /icons-.*\.svg$/.test(file))];
  const first = sizes(firstVisit);
  const all = sizes([path.join(dir, 'index.html'), ...assets]);
  console.log(`first visit downloads: ${firstVisit.length} files, ${kb(first.raw)} raw, ${kb(first.gzip)} gzip`);
  for (const file of firstVisit) console.log(`  ${path.basename(file)}: ${kb(statSync(file).size)}`);
  console.log(`everything built: ${assets.length + 1} files, ${kb(all.raw)} raw, ${kb(all.gzip)} gzip`);

  const service = await startTestService({ role: 'api', env: { DUO_CHAT_DIR: dir } });
  const { token } = await seedDemo(service.prisma);
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const loads: number[] = [];
  const signIns: number[] = [];
  const transferred: number[] = [];
  try {
    for (let run = 0; run < RUNS; run += 1) {
      const context = await browser.newContext();
      const page = await context.newPage();
      let bytes = 0;
      page.on('response', (response) => {
        response
          .body()
          .then((body) => (bytes += body.length))
          .catch(() => undefined);
      });
      const navigated = Date.now();
      await page.goto(`${service.url}/-/duo-chat`);
      await page.getByLabel('Personal access token').waitFor();
      loads.push(Date.now() - navigated);
      await page.getByLabel('Personal access token').fill(token);
      const submitted = Date.now();
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByTestId('index-state').waitFor();
      await page.locator('[data-testid="chat-prompt-input"]').first().waitFor();
      signIns.push(Date.now() - submitted);
      await page.waitForLoadState('networkidle');
      transferred.push(bytes);
      await context.close();
    }
  } finally {
    await browser.close();
    await service.close();
  }
  console.log(`first load (navigation -> sign-in form ready), median of ${RUNS} cold runs: ${median(loads)} ms  [${loads.join(', ')}]`);
  console.log(`sign-in -> chat ready, median: ${median(signIns)} ms  [${signIns.join(', ')}]`);
  console.log(`bytes received by the page (uncompressed; the service does not gzip), median: ${kb(median(transferred))}`);
  console.log('(2 shared cores under other work: compare figures from the same machine and moment only.)');
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
