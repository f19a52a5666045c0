import { readdirSync, readFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isAppError } from '../../src/errors';
import { resolveCommit } from '../../src/indexing/git-reader';
import { openRepository } from '../../src/indexing/repository-location';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { waitUntil } from '../helpers/wait';
import { ACCESS, startGitLabStandIn, type GitLabStandIn, type StandInProject } from '../helpers/gitlab-stand-in';

/** Every file under a directory, read as bytes and searched for each of the needles. */
function filesContaining(directory: string, needles: string[]): string[] {
  const found: string[] = [];
  const walk = (current: string) => {
    for (const name of readdirSync(current)) {
      const file = path.join(current, name);
      if (statSync(file).isDirectory()) walk(file);
      else {
        const content = readFileSync(file).toString('latin1');
        if (needles.some((needle) => content.includes(needle))) found.push(file);
      }
    }
  };
  walk(directory);
  return found;
}

const userMessage = (error: unknown) => (isAppError(error) ? error.userMessage : String(error));

/** Everything an error carries that could reach a log line or a user: messages, stack, causes, stderr. */
function everythingIn(error: unknown): string {
  const seen = new Set<unknown>();
  const parts: string[] = [];
  const visit = (value: unknown) => {
    if (!value || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    for (const key of Object.getOwnPropertyNames(value)) {
      const field = (value as Record<string, unknown>)[key];
      if (typeof field === 'string') parts.push(field);
      else if (Array.isArray(field)) parts.push(JSON.stringify(field));
      else visit(field);
    }
  };
  visit(error);
  return parts.join('\n');
}

// Connected mode: a project's repository is cloned from GitLab (real `git http-backend` behind GitLab's
// basic auth) with the service token, from under GITLAB_URL only, and the token is left nowhere.
describe('repositories from GitLab', () => {
  let gitlab: GitLabStandIn;
  let work: GitRepo;
  let dataDir: string;
  let project: StandInProject;
  let serviceToken: string;
  let projectId = 0;

  beforeAll(async () => {
    gitlab = await startGitLabStandIn();
    const service = gitlab.addUser({ username: 'duo-slice-service', bot: true });
    serviceToken = gitlab.addToken(service.id, { scopes: ['read_repository'] });
    const group = gitlab.addGroup({ path: 'platform' });
    project = gitlab.addProject({ namespace: group, path: 'api', visibility: 'private' });
    gitlab.setProjectMember(project, service.id, ACCESS.reporter);
    work = createGitRepo(SAMPLE_FILES);
    work.git('branch', 'feature');
    gitlab.git.push({ fullPath: gitlab.projectFullPath(project), from: work.path, branch: 'main' });
    gitlab.git.push({ fullPath: gitlab.projectFullPath(project), from: work.path, branch: 'feature' });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-gitlab-mirror-'));
  });
  afterAll(async () => {
    await gitlab.close();
    work.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    projectId += 1;
    gitlab.git.requests.length = 0;
  });

  const repositoryUrl = () => `${gitlab.url}/${gitlab.projectFullPath(project)}.git`;
  const open = (token: string | undefined, url = repositoryUrl()) =>
    openRepository({ projectId, repositoryUrl: url, dataDir, gitlab: { url: gitlab.url, serviceToken: token } });
  const secretsOf = (token: string) => [token, Buffer.from(`duo-slice:${token}`).toString('base64')];

  it('clones over HTTP with the service token as basic auth, then fetches, leaving the token in no file of the clone', async () => {
    const { repository } = await open(serviceToken);
    expect(await resolveCommit({ repository }, 'main')).toBe(work.head());
    expect(await resolveCommit({ repository }, 'feature')).toBe(work.head());
    // Through git http-backend (smart protocol), every request with the service token, none without it answered.
    const served = gitlab.git.requests.filter((request) => request.status === 200);
    expect(served.map((request) => request.path)).toEqual(
      expect.arrayContaining([
        `/${gitlab.projectFullPath(project)}.git/info/refs`,
        `/${gitlab.projectFullPath(project)}.git/git-upload-pack`,
      ]),
    );
    expect(gitlab.git.requests.every((request) => request.token === serviceToken)).toBe(true);

    work.write('src/new-file.ts', 'export const added = true;\n');
    const next = work.commit('a new file');
    gitlab.git.push({ fullPath: gitlab.projectFullPath(project), from: work.path, branch: 'main' });
    await open(serviceToken);
    expect(await resolveCommit({ repository }, 'main')).toBe(next);

    expect(filesContaining(dataDir, secretsOf(serviceToken))).toEqual([]);
    expect(readFileSync(path.join(repository, 'config'), 'utf8')).toContain(`url = ${repositoryUrl()}`);
  });

  it('shows the token in the command line of no process while git clones', async () => {
    gitlab.git.hold();
    const cloning = open(serviceToken);
    let commandLines: string[];
    try {
      await waitUntil(() => gitlab.git.held, { until: (held) => held > 0, what: 'the clone to ask GitLab' });
      // What `ps -ef` shows: every process's arguments, git's among them while it waits for GitLab.
      commandLines = readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .map((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
          } catch {
            return '';
          }
        });
    } finally {
      gitlab.git.release();
    }
    await cloning;
    expect(commandLines.some((line) => line.includes('git') && line.includes(repositoryUrl()))).toBe(true);
    for (const secret of secretsOf(serviceToken)) expect(commandLines.filter((line) => line.includes(secret))).toEqual([]);
  });

  it('fails with a clear error naming the token and its scope when GitLab refuses it (401), and the error holds no token', async () => {
    const wrong = 'glpat-wrong-token-0123456789';
    const error = await open(wrong).catch((failure: unknown) => failure);
    expect(isAppError(error) && error.code).toBe('BAD_USER_INPUT');
    expect(userMessage(error)).toMatch(/GitLab at .* refused GITLAB_SERVICE_TOKEN .* read_repository/);
    expect(gitlab.git.requests.some((request) => request.status === 401 && request.token === wrong)).toBe(true);
    expect(everythingIn(error)).not.toContain(wrong);
    for (const secret of secretsOf(wrong)) expect(everythingIn(error)).not.toContain(secret);
    expect(filesContaining(dataDir, secretsOf(wrong))).toEqual([]);
  });

  it('refuses a token without read_repository or api (401), and one whose user may not read the project (404)', async () => {
    const reader = gitlab.addUser({ username: 'reader-without-scope' });
    gitlab.setProjectMember(project, reader.id, ACCESS.developer);
    const noScope = gitlab.addToken(reader.id, { scopes: ['read_user'] });
    const refused = await open(noScope).catch((failure: unknown) => failure);
    expect(userMessage(refused)).toMatch(/refused GITLAB_SERVICE_TOKEN/);
    expect(everythingIn(refused)).not.toContain(noScope);

    const outsider = gitlab.addUser({ username: 'not-a-member' });
    const outsiderToken = gitlab.addToken(outsider.id, { scopes: ['read_repository'] });
    const hidden = await open(outsiderToken).catch((failure: unknown) => failure);
    expect(isAppError(hidden) && hidden.code).toBe('BAD_USER_INPUT');
    expect(userMessage(hidden)).toMatch(/has no repository .* GITLAB_SERVICE_TOKEN may read: .* Reporter/);
    expect(gitlab.git.requests.some((request) => request.status === 404 && request.token === outsiderToken)).toBe(true);
    expect(everythingIn(hidden)).not.toContain(outsiderToken);
  });

  it('refuses at once, asking nothing, without GITLAB_SERVICE_TOKEN or for a repository that is not under GITLAB_URL', async () => {
    const missing = await open(undefined).catch((failure: unknown) => failure);
    expect(userMessage(missing)).toMatch(/GITLAB_SERVICE_TOKEN is not set/);
    for (const elsewhere of [
      'http://127.0.0.1:1/platform/api.git',
      repositoryUrl().replace('http://', 'https://'),
      repositoryUrl().replace('://', `://user:${serviceToken}@`),
      `${repositoryUrl()}?x=1`,
    ]) {
      const error = await open(serviceToken, elsewhere).catch((failure: unknown) => failure);
      expect(isAppError(error) && error.code).toBe('BAD_USER_INPUT');
      expect(userMessage(error)).toMatch(/is not on GitLab at .*: with GITLAB_URL set, repositories are read from that GitLab only/);
      expect(everythingIn(error)).not.toContain(serviceToken);
    }
    expect(gitlab.git.requests).toEqual([]);
  });
});
