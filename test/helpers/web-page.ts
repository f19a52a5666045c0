import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type BrowserContext } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/paths';
import { CHROMIUM_PATH } from './test-env';

function filesUnder(directory: string): string[] {
  return readdirSync(directory)
    .flatMap((name) => {
      const full = path.join(directory, name);
      return statSync(full).isDirectory() ? filesUnder(full) : [full];
    })
    .sort();
}

/**
 * The chat page built by Vite (scripts/build-web.js) into a cache directory named by a digest of
 * its sources and the lockfile, so test runs after the first reuse it until something changes.
 */
export async function builtChatPage(): Promise<string> {
  const digest = createHash('sha256');
  for (const file of [
    ...filesUnder(path.join(PROJECT_ROOT, 'web')),
    path.join(PROJECT_ROOT, 'scripts', 'build-web.js'),
    path.join(PROJECT_ROOT, 'package-lock.json'),
  ]) {
    digest.update(path.relative(PROJECT_ROOT, file)).update(readFileSync(file));
  }
  const cacheDir = path.join(PROJECT_ROOT, 'node_modules', '.cache', 'duo-chat-page');
  const name = digest.digest('hex').slice(0, 16);
  const outDir = path.join(cacheDir, name);
  if (!existsSync(path.join(outDir, 'index.html'))) {
    await promisify(execFile)(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'build-web.js'), outDir], {
      cwd: PROJECT_ROOT,
      timeout: 240_000,
    });
    // Builds of older sources are not needed again.
    for (const old of readdirSync(cacheDir)) if (old !== name) rmSync(path.join(cacheDir, old), { recursive: true, force: true });
  }
  return outDir;
}

export type TestBrowser = {
  context: BrowserContext;
  /** Every request to a host other than the service's. */
  foreignRequests: string[];
  close(): Promise<void>;
};

/** Debian's chromium through playwright-core, headless, on a fresh profile; requests to other hosts are recorded and refused. */
export async function launchBrowser(serviceUrl: string): Promise<TestBrowser> {
  const userDataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport: { width: 1280, height: 800 },
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
  const allowed = new URL(serviceUrl).host;
  const foreignRequests: string[] = [];
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.host === allowed) return route.continue();
    foreignRequests.push(route.request().url());
    return route.abort();
  });
  // WebSockets do not pass through route(): they are checked here.
  context.on('page', (page) =>
    page.on('websocket', (socket) => {
      if (new URL(socket.url()).host !== allowed) foreignRequests.push(socket.url());
    }),
  );
  return {
    context,
    foreignRequests,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
