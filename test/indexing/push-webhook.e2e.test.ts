import { randomUUID } from 'node:crypto';
import type { Project } from '../../src/db/prisma';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, projectIn, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { readJson } from '../helpers/http';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';
import { postPushHook } from '../helpers/push-hook';

const ZERO = '0'.repeat(40);
const SECRET = 'webhook-secret-for-tests-0123456789';

const CODE_INDEX =
  `query($path: ID!, $ref: String) { project(fullPath: $path) { codeIndex(ref: $ref) { ref state commitSha filesIndexed ` +
  `chunkCount embeddedCount lastError startedAt finishedAt } } }`;

// The whole path: GitLab's push event over HTTP, the BullMQ index queue, the worker, and GraphQL.
describe('push webhook to a searchable index', () => {
  let service: TestService;
  let repo: GitRepo;
  let project: Project;
  let maintainer: UserWithToken;
  let developer: UserWithToken;

  beforeAll(async () => {
    service = await startTestService({ role: 'all', env: { INDEX_DEBOUNCE_MS: '500' } });
    repo = createGitRepo(SAMPLE_FILES);
    maintainer = await userWithToken(service.prisma);
    developer = await userWithToken(service.prisma);
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
    project = (
      await createProject(service.prisma, { fullPath: `${group}/${unique('repo')}`, repository: repo.path, webhookSecret: SECRET })
    ).project;
    await addMember(service.prisma, { fullPath: project.fullPath, username: maintainer.username, accessLevel: 'maintainer' });
    await addMember(service.prisma, { fullPath: project.fullPath, username: developer.username, accessLevel: 'developer' });
  });
  afterAll(async () => {
    await service.close();
    repo.destroy();
  });

  const pushBody = (overrides: Record<string, unknown> = {}) => ({
    object_kind: 'push',
    ref: 'refs/heads/main',
    before: ZERO,
    after: repo.head(),
    checkout_sha: repo.head(),
    total_commits_count: 1,
    project: { id: project.id, path_with_namespace: project.fullPath, default_branch: 'main', git_http_url: 'http://example.com/x.git' },
    commits: [{ added: ['src/connection.ts'], modified: [], removed: [] }],
    ...overrides,
  });

  const push = (body: unknown, headers: Record<string, string> = {}) => postPushHook(service.url, body, { token: SECRET, headers });

  async function codeIndex(ref = 'main', token = developer.token) {
    const response = await service.graphql<{ project: { codeIndex: Record<string, unknown> | null } | null }>(CODE_INDEX, {
      variables: { path: project.fullPath, ref },
      token,
    });
    return response.body.data?.project?.codeIndex ?? null;
  }

  const waitFor = (predicate: (index: Record<string, unknown> | null) => boolean, ref = 'main', timeoutMs = 20_000) =>
    waitUntil(() => codeIndex(ref), { until: predicate, timeoutMs, intervalMs: 100, what: `the index of ${ref}` });

  it(
    'refuses a wrong or missing token (401), an unknown project (401 too: nothing tells it from a wrong secret), another event (400) ' +
      'and a malformed body naming the field (400)',
    async () => {
      expect((await push(pushBody(), { 'X-Gitlab-Token': 'wrong-secret-wrong-secret' })).status).toBe(401);
      const missing = await fetch(`${service.url}/api/v4/webhooks/push`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Gitlab-Event': 'Push Hook' },
        body: JSON.stringify(pushBody()),
      });
      expect(missing.status).toBe(401);
      const unknown = await push(pushBody({ project: { path_with_namespace: 'nobody/nothing' } }));
      expect(unknown.status).toBe(401);
      const otherEvent = await push(pushBody(), { 'X-Gitlab-Event': 'Issue Hook' });
      expect(otherEvent.status).toBe(400);
      expect(await readJson(otherEvent)).toMatchObject({ field: 'X-Gitlab-Event' });
      const badAfter = await push(pushBody({ after: 'not-a-sha' }));
      expect(badAfter.status).toBe(400);
      expect(await readJson(badAfter)).toMatchObject({ field: 'after', error: expect.stringContaining('after') });
      const noProject = await push({ object_kind: 'push', ref: 'refs/heads/main', before: ZERO, after: ZERO });
      expect(await readJson(noProject)).toMatchObject({ field: 'project' });
      const notJson = await push('{"object_kind": ');
      expect(notJson.status).toBe(400);
      expect(await codeIndex()).toBeNull();
    },
  );

  it('answers 413 to a body over the limit', async () => {
    const huge = pushBody({
      commits: [{ added: Array.from({ length: 200_000 }, (_, index) => `src/file-${index}-${'x'.repeat(20)}.ts`) }],
    });
    expect((await push(huge)).status).toBe(413);
  });

  it('answers 202 with the job id at once, indexes the branch, and a repeated event uuid enqueues nothing new', async () => {
    const uuid = randomUUID();
    const first = await push(pushBody(), { 'X-Gitlab-Event-UUID': uuid });
    expect(first.status).toBe(202);
    const accepted = await readJson(first);
    expect(accepted).toMatchObject({ job_id: expect.any(String), project_id: project.id, ref: 'main', duplicate: false });
    const again = await readJson(await push(pushBody(), { 'X-Gitlab-Event-UUID': uuid }));
    expect(again).toEqual({ ...accepted, duplicate: true });
    const ready = await waitFor((index) => index?.state === 'READY');
    expect(ready).toMatchObject({
      ref: 'main',
      commitSha: repo.head(),
      filesIndexed: 4,
      lastError: null,
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
    });
    expect(ready!.chunkCount).toBeGreaterThan(0);
    expect(ready!.embeddedCount).toBe(ready!.chunkCount);
  });

  it('folds a burst of pushes into one run of the newest commit', async () => {
    // The commits first, then their events back to back, as GitLab delivers a burst: the gap between
    // two events is one request, not the time git takes to commit on a loaded machine.
    const commits: string[] = [];
    for (let index = 0; index < 4; index += 1) {
      repo.write(`src/burst-${index}.ts`, `export const burst${index} = ${index};\n`);
      commits.push(repo.commit(`burst ${index}`));
    }
    const bodies = commits.map((after) => pushBody({ after, checkout_sha: after }));
    const jobIds = new Set<string>();
    // The queue held while they arrive: on a loaded CI machine four requests outlasted the debounce, the delayed
    // job started, and the next push rightly got a run of its own. Held, the burst is one however slow the machine.
    const indexing = service.running.services.queues.indexing;
    await indexing.pause();
    try {
      for (const body of bodies) jobIds.add((await readJson(await push(body))).job_id);
    } finally {
      await indexing.resume();
    }
    const last = commits.at(-1);
    // Deduplicated while waiting: every push got the same delayed job back.
    expect(jobIds.size).toBe(1);
    const ready = await waitFor((index) => index?.commitSha === last && index?.state === 'READY');
    expect(ready!.filesIndexed).toBe(8);
  });

  it('indexes another branch on its own, and a push deleting it drops its index', async () => {
    repo.git('checkout', '-q', '-b', 'feature/x');
    repo.write('src/feature.ts', 'export function featureFlag() {\n  return true;\n}\n');
    const featureHead = repo.commit('feature');
    repo.git('checkout', '-q', 'main');
    await push(pushBody({ ref: 'refs/heads/feature/x', after: featureHead }));
    await waitFor((index) => index?.state === 'READY' && index?.commitSha === featureHead, 'feature/x');
    repo.git('branch', '-q', '-D', 'feature/x');
    const deletion = await push(pushBody({ ref: 'refs/heads/feature/x', before: featureHead, after: ZERO }));
    expect(deletion.status).toBe(202);
    await waitFor((index) => index === null, 'feature/x');
    expect((await codeIndex('main'))?.state).toBe('READY');
  });

  it('ignores tag pushes', async () => {
    const response = await push(pushBody({ ref: 'refs/tags/v1.0.0' }));
    expect(response.status).toBe(202);
    expect(await readJson(response)).toMatchObject({ job_id: null, ignored: expect.stringContaining('tag') });
  });

  it('lets maintainers start or rebuild an index through GraphQL; developers are refused, strangers see nothing', async () => {
    const mutation =
      `mutation($input: ProjectCodeIndexCreateInput!) { projectCodeIndexCreate(input: $input) { jobId errors codeIndex { ` +
      `ref state } } }`;
    const refused = await service.graphql(mutation, {
      variables: { input: { projectPath: project.fullPath, force: true } },
      token: developer.token,
    });
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const stranger = await userWithToken(service.prisma);
    const hidden = await service.graphql(mutation, { variables: { input: { projectPath: project.fullPath } }, token: stranger.token });
    const missing = await service.graphql(mutation, { variables: { input: { projectPath: 'nobody/nothing' } }, token: stranger.token });
    expect(hidden.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(hidden.body.errors?.[0]?.message).toBe(missing.body.errors?.[0]?.message);
    const badRef = await service.graphql(mutation, {
      variables: { input: { projectPath: project.fullPath, ref: '--upload-pack=x' } },
      token: maintainer.token,
    });
    expect(badRef.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const before = (await codeIndex())!;
    const started = await service.graphql<{ projectCodeIndexCreate: { jobId: string; codeIndex: { ref: string } } }>(mutation, {
      variables: { input: { projectPath: project.fullPath, force: true } },
      token: maintainer.token,
    });
    expect(started.body.errors).toBeUndefined();
    expect(started.body.data?.projectCodeIndexCreate).toMatchObject({ jobId: expect.any(String), codeIndex: { ref: 'main' } });
    await waitFor((index) => index?.state === 'READY' && index.finishedAt !== before.finishedAt);
  });

  it('shows a failed index with the reason when the repository cannot be read', async () => {
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
    const broken = await projectIn(service.prisma, group, { member: { username: developer.username, accessLevel: 'maintainer' } });
    await service.prisma.project.update({ where: { id: broken.id }, data: { repositoryUrl: '/nonexistent/repository' } });
    const mutation = `mutation($input: ProjectCodeIndexCreateInput!) { projectCodeIndexCreate(input: $input) { jobId } }`;
    await service.graphql(mutation, { variables: { input: { projectPath: broken.fullPath } }, token: developer.token });
    const started = Date.now();
    for (;;) {
      const response = await service.graphql<{ project: { codeIndex: { state: string; lastError: string | null } } }>(CODE_INDEX, {
        variables: { path: broken.fullPath },
        token: developer.token,
      });
      const index = response.body.data?.project?.codeIndex;
      if (index?.state === 'FAILED') {
        expect(index.lastError).toMatch(/does not exist or is not a directory/);
        break;
      }
      if (Date.now() - started > 15_000) throw new Error(`never failed: ${JSON.stringify(index)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
});
