import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestService, type TestService } from '../helpers/test-service';

/** GET with a Host header of our choosing (fetch sends the URL's); the Content-Security-Policy answered. */
function policyOf(url: string, options: { host?: string; accept?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = http.get(
      {
        hostname: target.hostname,
        port: target.port,
        path: target.pathname,
        headers: { host: options.host ?? target.host, accept: options.accept ?? '*/*' },
      },
      (response) => {
        response.resume();
        resolve(String(response.headers['content-security-policy'] ?? ''));
      },
    );
    request.on('error', reject);
  });
}

const connectSources = (policy: string) => /connect-src ([^;]*)/.exec(policy)?.[1].trim().split(/\s+/) ?? [];

// The pages' policy lets their scripts open WebSockets to their own host only, where `ws: wss:` allowed any host.
describe('the pages’ Content-Security-Policy', () => {
  const built = mkdtempSync(path.join(os.tmpdir(), 'duo-chat-built-'));
  let service: TestService;
  let external: TestService;

  beforeAll(async () => {
    mkdirSync(path.join(built, 'assets'));
    writeFileSync(path.join(built, 'index.html'), '<!doctype html><title>chat</title>');
    [service, external] = await Promise.all([
      startTestService({ env: { DUO_CHAT_DIR: built } }),
      startTestService({ env: { DUO_CHAT_DIR: built, EXTERNAL_URL: 'https://gitlab.example.com' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([service.close(), external.close()]);
    rmSync(built, { recursive: true, force: true });
  });

  it.each([
    ['the chat page', '/-/duo-chat', 'text/html'],
    ['the GraphQL playground', '/api/graphql', 'text/html'],
  ])('%s names its own host for WebSockets, and no other', async (_page, pagePath, accept) => {
    const host = new URL(service.url).host;
    expect(connectSources(await policyOf(`${service.url}${pagePath}`, { accept }))).toEqual(["'self'", `ws://${host}`, `wss://${host}`]);
    // As the browser reached it (a name, behind a proxy), and EXTERNAL_URL's host.
    expect(connectSources(await policyOf(`${service.url}${pagePath}`, { accept, host: 'Duo.Example:8080' }))).toEqual([
      "'self'",
      'ws://duo.example:8080',
      'wss://duo.example:8080',
    ]);
    expect(connectSources(await policyOf(`${external.url}${pagePath}`, { accept, host: 'localhost' }))).toEqual([
      "'self'",
      'ws://localhost',
      'wss://localhost',
      'ws://gitlab.example.com',
      'wss://gitlab.example.com',
    ]);
    // A Host header that is not a plain host names nothing (it would write the policy).
    const forged = await policyOf(`${service.url}${pagePath}`, { accept, host: 'evil.example; connect-src *' });
    expect(connectSources(forged)).toEqual(["'self'"]);
    expect(forged).not.toContain('evil');
  });
});
