import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { isAppError } from '../../src/errors';
import { resolveCommit } from '../../src/indexing/git-reader';
import { gitDirWithoutFetch, openRepository } from '../../src/indexing/repository-location';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { waitUntil } from '../helpers/wait';

/**
 * git's dumb http protocol over a repository's .git: a static server, which can hold its answers
 * (a slow remote) or fail the next ones with a status (a remote having a bad moment).
 */
async function startGitServer(repo: GitRepo) {
  repo.git('update-server-info');
  const held: Array<() => void> = [];
  const state = { hold: false, failNext: 0, failStatus: 500, requests: 0 };
  const server: Server = createServer(async (request, response) => {
    state.requests += 1;
    if (state.failNext > 0) {
      state.failNext -= 1;
      response.statusCode = state.failStatus;
      response.end();
      return;
    }
    if (state.hold) await new Promise<void>((resolve) => held.push(resolve));
    try {
      response.end(await readFile(path.join(repo.path, '.git', decodeURIComponent(new URL(request.url!, 'http://x').pathname))));
    } catch {
      response.statusCode = 404;
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
    state,
    held,
    release: () => {
      state.hold = false;
      held.splice(0).forEach((resolve) => resolve());
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// A remote project's mirror under DATA_DIR: complete only once git says so, one clone or fetch at a
// time, a remote's bad moment retried and a wrong URL refused at once.
describe("a remote repository's mirror", () => {
  let repo: GitRepo;
  let server: Awaited<ReturnType<typeof startGitServer>>;
  let dataDir: string;
  let projectId = 0;

  beforeAll(async () => {
    repo = createGitRepo(SAMPLE_FILES);
    repo.git('branch', 'feature');
    server = await startGitServer(repo);
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-mirror-'));
  });
  afterAll(async () => {
    server.release();
    await server.close();
    repo.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    projectId += 1;
    server.state.failNext = 0;
  });

  const location = () => ({ projectId, repositoryUrl: server.url, dataDir });

  it('is not there to look refs up in until its first clone has finished', async () => {
    server.state.hold = true;
    const cloning = openRepository(location());
    try {
      await waitUntil(() => server.held.length > 0, { what: 'the clone to ask the remote' });
      // git wrote the clone's HEAD before fetching anything: a branch looked up now would be missing.
      expect(gitDirWithoutFetch(location())).toBeNull();
    } finally {
      server.release();
    }
    const { repository } = await cloning;
    expect(gitDirWithoutFetch(location())).toBe(repository);
    expect(await resolveCommit({ repository }, 'feature')).toBe(repo.head());
  });

  it('is cloned or fetched by one run at a time', async () => {
    await openRepository(location());
    server.state.hold = true;
    const runs = [openRepository(location()), openRepository(location())];
    try {
      await waitUntil(() => server.held.length > 0, { what: 'a fetch to ask the remote' });
      // Long enough for the other run's fetch to reach the remote, were it let through.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const asking = server.held.length;
      expect(asking).toBe(1);
    } finally {
      server.release();
    }
    // The second run waited, then fetched in turn: both succeed.
    await expect(Promise.all(runs)).resolves.toHaveLength(2);
  });

  it('tries again when the remote fails for a moment', async () => {
    server.state.failNext = 2;
    server.state.failStatus = 503;
    const { repository } = await openRepository(location());
    expect(await resolveCommit({ repository }, 'main')).toBe(repo.head());
  });

  it('refuses a repository the remote does not have at once, as bad input', async () => {
    const started = Date.now();
    const requests = server.state.requests;
    const error = await openRepository({ ...location(), repositoryUrl: `${server.url}missing/` }).catch((failure: unknown) => failure);
    expect(isAppError(error) && error.code).toBe('BAD_USER_INPUT');
    // One attempt: no back-off, and only the requests of one clone.
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(server.state.requests - requests).toBeLessThanOrEqual(2);
  });
});
