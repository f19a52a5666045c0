import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestService, type TestService } from '../helpers/test-service';

// How the service serves the built chat page (the page itself is tested in a browser: test/web).
describe('GET /-/duo-chat', () => {
  const built = mkdtempSync(path.join(os.tmpdir(), 'duo-chat-built-'));
  const empty = mkdtempSync(path.join(os.tmpdir(), 'duo-chat-empty-'));
  let service: TestService;
  let unbuilt: TestService;

  beforeAll(async () => {
    mkdirSync(path.join(built, 'assets'));
    writeFileSync(path.join(built, 'index.html'), '<!doctype html><script type="module" src="/-/duo-chat/assets/index-abc.js"></script>');
    writeFileSync(path.join(built, 'assets', 'index-abc.js'), 'console.log(1);');
    [service, unbuilt] = await Promise.all([
      startTestService({ env: { DUO_CHAT_DIR: built } }),
      startTestService({ env: { DUO_CHAT_DIR: empty } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([service.close(), unbuilt.close()]);
    rmSync(built, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  });

  it('serves the page with a policy that allows this origin only', async () => {
    for (const url of [`${service.url}/-/duo-chat`, `${service.url}/-/duo-chat/`]) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(response.headers.get('content-security-policy')).toMatch(
        new RegExp(`default-src 'self'; script-src 'self';.*connect-src 'self' ws://${new URL(url).host} wss://${new URL(url).host};`),
      );
      expect(await response.text()).toContain('/-/duo-chat/assets/index-abc.js');
    }
  });

  it("leads a browser from the instance's root to the page", async () => {
    const response = await fetch(`${service.url}/`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/-/duo-chat');
  });

  it("sends a GitLab blob URL to the page's file view, and leaves the API's paths alone", async () => {
    const response = await fetch(`${service.url}/acme/sub/shop/-/blob/feature%2Fx/src/a%20b.ts`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!, service.url);
    expect(location.pathname).toBe('/-/duo-chat');
    expect(Object.fromEntries(location.searchParams)).toEqual({ project: 'acme/sub/shop', ref: 'feature/x', path: 'src/a b.ts' });
    expect((await fetch(`${service.url}/api/v4/x/-/blob/main/a.ts`, { redirect: 'manual' })).status).toBe(404);
    // The project's path ends at the first `/-/`: what follows `blob/<ref>/` is the file's, `-` segments and all.
    const nested = await fetch(`${service.url}/g/p/-/blob/main/docs/-/blob/x/y.md`, { redirect: 'manual' });
    expect(Object.fromEntries(new URL(nested.headers.get('location')!, service.url).searchParams)).toEqual({
      project: 'g/p',
      ref: 'main',
      path: 'docs/-/blob/x/y.md',
    });
  });

  it('serves hashed assets for good and 404s the rest', async () => {
    const asset = await fetch(`${service.url}/-/duo-chat/assets/index-abc.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${service.url}/-/duo-chat/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${service.url}/-/duo-chat/assets/..%2Findex.html`)).status).not.toBe(200);
  });

  it('says how to build the page when it is not built', async () => {
    const response = await fetch(`${unbuilt.url}/-/duo-chat`);
    expect(response.status).toBe(503);
    expect(await response.text()).toContain('npm run build');
  });
});
