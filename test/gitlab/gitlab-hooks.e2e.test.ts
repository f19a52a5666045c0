import { randomBytes } from 'node:crypto';
import { searchCode } from '../../src/search/search-code';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { ACCESS, startGitLabStandIn, type GitLabStandIn, type StandInProject, type StandInUser } from '../helpers/gitlab-stand-in';
import { runCli } from '../helpers/run-cli';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

const SYSTEM_HOOK_TOKEN = `system-hook-${randomBytes(12).toString('hex')}`;

// Connected mode, no admin command but the hook registration: a push on GitLab (the stand-in: a real
// repository behind git http-backend, GitLab's hook API and deliveries) reaches the webhook route over
// HTTP, goes through the BullMQ index queue (real Redis, a prefix of its own) to the worker, which
// clones the repository from GitLab with the service token, and search finds the pushed code.
describe('hooks from GitLab to a searchable index', () => {
  let gitlab: GitLabStandIn;
  let service: TestService;
  let serviceToken: string;
  let pusher: StandInUser;
  let api: StandInProject;
  let worker: StandInProject;
  let outside: StandInProject;
  let work: GitRepo;
  let hookUrl: string;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    gitlab = await startGitLabStandIn();
    const bot = gitlab.addUser({ username: 'duo-slice-service', bot: true });
    serviceToken = gitlab.addToken(bot.id, { scopes: ['api'] });
    pusher = gitlab.addUser({ username: 'alice' });
    const platform = gitlab.addGroup({ path: 'platform' });
    const backend = gitlab.addGroup({ path: 'backend', parent: platform });
    const elsewhere = gitlab.addGroup({ path: 'elsewhere' });
    gitlab.setGroupMember(platform, bot.id, ACCESS.maintainer);
    gitlab.setGroupMember(elsewhere, bot.id, ACCESS.reporter);
    api = gitlab.addProject({ namespace: platform, path: 'api', visibility: 'private' });
    worker = gitlab.addProject({ namespace: backend, path: 'worker', visibility: 'internal' });
    outside = gitlab.addProject({ namespace: elsewhere, path: 'lib', visibility: 'private' });
    work = createGitRepo(SAMPLE_FILES);
    for (const project of [api, worker, outside])
      gitlab.git.push({ fullPath: gitlab.projectFullPath(project), from: work.path, branch: 'main' });
    service = await startTestService({
      role: 'all',
      env: {
        GITLAB_URL: gitlab.url,
        GITLAB_SERVICE_TOKEN: serviceToken,
        GITLAB_SYSTEM_HOOK_TOKEN: SYSTEM_HOOK_TOKEN,
        INDEX_DEBOUNCE_MS: '200',
      },
    });
    hookUrl = `${service.url}/api/v4/webhooks/push`;
    cliEnv = {
      DATABASE_URL: service.running.services.config.databaseUrl!,
      GITLAB_URL: gitlab.url,
      GITLAB_SERVICE_TOKEN: serviceToken,
      LOG_LEVEL: 'debug',
    };
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await gitlab?.close();
    work?.destroy();
  });

  const admin = (...args: string[]) => runCli('admin', args, cliEnv);

  /** The project's default branch searched for a question, once its index is ready. */
  async function searchFinds(projectId: number, question: string, path: string) {
    const index = await waitUntil(
      () => service.prisma.codeIndex.findFirst({ where: { projectId, ref: 'main' }, include: { activeSnapshot: true } }),
      {
        until: (found) => found?.state === 'ready' && found.activeSnapshot !== null && found.commitSha === work.head(),
        timeoutMs: 60_000,
        intervalMs: 200,
        what: `project ${projectId} indexed at ${work.head()}`,
      },
    );
    const result = await searchCode({
      prisma: service.prisma,
      embedder: service.running.services.embedder,
      scope: {
        projectId,
        snapshotId: index!.activeSnapshotId!,
        directory: '',
        coversProject: index!.activeSnapshot!.coversProject,
        vectorGraph: false,
        embedderVersion: index!.activeSnapshot!.embedderVersion,
      },
      query: question,
    });
    expect(result.files.map((file) => file.path)).toContain(path);
  }

  it('registers the push webhook on every project of a group and its subgroups, once however often it runs', async () => {
    const first = await admin('register-webhooks', '--group', 'platform', '--url', hookUrl, '--ssl-verification', 'false');
    expect(first.stderr).not.toMatch(/error/);
    expect(first.code).toBe(0);
    const answer = JSON.parse(first.stdout) as { registered: Array<Record<string, unknown>>; failed: unknown[] };
    expect(answer.failed).toEqual([]);
    expect(answer.registered).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ project_id: api.id, full_path: 'platform/api', action: 'created' }),
        expect.objectContaining({ project_id: worker.id, full_path: 'platform/backend/worker', action: 'created' }),
      ]),
    );
    expect(answer.registered).toHaveLength(2);
    expect(gitlab.hooks.of(outside)).toEqual([]);
    const [hook] = gitlab.hooks.of(api);
    const firstSecret = hook.token;
    expect(hook).toMatchObject({ url: hookUrl, pushEvents: true, enableSslVerification: false, token: expect.any(String) });

    // Again, one project by path: the same hook, updated with a new secret; the secret's digest follows.
    const again = await admin('register-webhooks', '--project', 'platform/api', '--url', hookUrl);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).registered).toEqual([
      expect.objectContaining({ project_id: api.id, hook_id: hook.id, action: 'updated' }),
    ]);
    expect(gitlab.hooks.of(api)).toHaveLength(1);
    expect(gitlab.hooks.of(api)[0].token).not.toBe(firstSecret);
    // The projects are mirrored as a user's request mirrors them: GitLab's ids, visibility, repository and web URLs; no
    // secret or token is printed.
    const local = await service.prisma.project.findUniqueOrThrow({ where: { gitlabProjectId: api.id } });
    expect(local).toMatchObject({
      id: api.id,
      fullPath: 'platform/api',
      visibility: 'private',
      repositoryUrl: `${gitlab.url}/platform/api.git`,
      webUrl: `${gitlab.url}/platform/api`,
    });
    for (const output of [first.stdout, first.stderr, again.stdout, again.stderr]) {
      expect(output).not.toContain(serviceToken);
      expect(output).not.toContain(gitlab.hooks.of(api)[0].token);
    }
    // GitLab's answers were GitLab's shape, and every request carried the service token.
    expect(gitlab.violations).toEqual([]);
    expect(gitlab.requests.filter((request) => request.path.includes('/hooks')).every((request) => request.token === serviceToken)).toBe(
      true,
    );
  });

  it('walks every page of a large group, and says which projects it could not register and why', async () => {
    const many = gitlab.addGroup({ path: 'many' });
    // Another service account: Maintainer of the group's projects, only Reporter of a project elsewhere.
    const keeper = gitlab.addUser({ username: 'keeper' });
    const weakToken = gitlab.addToken(keeper.id, { scopes: ['api'] });
    gitlab.setGroupMember(many, keeper.id, ACCESS.maintainer);
    const projects = Array.from({ length: 105 }, (_, index) => gitlab.addProject({ namespace: many, path: `p${index}` }));
    const lone = gitlab.addProject({ namespace: gitlab.addUser({ username: 'owner-of-lone' }), path: 'lone' });
    gitlab.setProjectMember(lone, keeper.id, ACCESS.reporter);
    const run = await runCli('admin', ['register-webhooks', '--group', 'many', '--url', hookUrl], {
      ...cliEnv,
      GITLAB_SERVICE_TOKEN: weakToken,
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).registered).toHaveLength(105);
    expect(projects.every((project) => gitlab.hooks.of(project).length === 1)).toBe(true);
    const pages = gitlab.requests.filter((request) => request.path === `/api/v4/groups/many/projects`);
    expect(pages).toHaveLength(2);

    const refused = await runCli('admin', ['register-webhooks', '--project', String(lone.id), '--url', hookUrl], {
      ...cliEnv,
      GITLAB_SERVICE_TOKEN: weakToken,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Maintainer role/);
    expect(gitlab.hooks.of(lone)).toEqual([]);
    expect(refused.stdout + refused.stderr).not.toContain(weakToken);

    const unknown = await admin('register-webhooks', '--group', 'no-such-group', '--url', hookUrl);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/has no group no-such-group/);
    const neither = await admin('register-webhooks', '--url', hookUrl);
    expect(neither.stderr).toMatch(/one of --project or --group/);
    const standalone = await runCli('admin', ['register-webhooks', '--group', 'platform', '--url', hookUrl], {
      DATABASE_URL: cliEnv.DATABASE_URL,
    });
    expect(standalone.code).toBe(1);
    expect(standalone.stderr).toMatch(/register-webhooks needs GITLAB_URL/);
    const noHookUrl = await admin('register-webhooks', '--group', 'platform');
    expect(noHookUrl.stderr).toMatch(/set EXTERNAL_URL .* or pass --url/);
  }, 60_000);

  it('indexes a project when GitLab delivers its push event to the project hook, cloning with the service token', async () => {
    work.write(
      'src/invoice-ledger.ts',
      'export function reconcileInvoiceLedger(entries: number[]): number {\n  return entries.reduce((a, b) => a + b, 0);\n}\n',
    );
    work.commit('ledger');
    const { before, after } = gitlab.git.push({ fullPath: 'platform/api', from: work.path, branch: 'main' });
    const deliveries = await gitlab.hooks.deliverPush({ project: api, branch: 'main', before, after, user: pusher });
    expect(deliveries.filter((delivery) => delivery.hook === 'project')).toEqual([
      expect.objectContaining({
        status: 202,
        body: expect.objectContaining({ project_id: api.id, ref: 'main', job_id: expect.any(String) }),
      }),
    ]);
    await searchFinds(api.id, 'reconcile invoice ledger entries', 'src/invoice-ledger.ts');
    // The clone went through git http-backend with the service token.
    expect(
      gitlab.git.requests.some(
        (request) => request.path === '/platform/api.git/git-upload-pack' && request.token === serviceToken && request.status === 200,
      ),
    ).toBe(true);
  }, 90_000);

  it('indexes a project it has never seen when a system hook delivers its push, and acknowledges other system events', async () => {
    const fresh = gitlab.addProject({ namespace: gitlab.addGroup({ path: 'fresh' }), path: 'service', visibility: 'internal' });
    expect(await service.prisma.project.findUnique({ where: { id: fresh.id } })).toBeNull();
    gitlab.hooks.addSystemHook({ url: hookUrl, token: SYSTEM_HOOK_TOKEN });
    work.write(
      'src/payroll-batch.ts',
      'export function schedulePayrollBatch(employees: string[]): string[] {\n  return [...employees].sort();\n}\n',
    );
    work.commit('payroll');
    const { before, after } = gitlab.git.push({ fullPath: 'fresh/service', from: work.path, branch: 'main' });
    const deliveries = await gitlab.hooks.deliverPush({ project: fresh, branch: 'main', before, after, user: pusher });
    expect(deliveries).toEqual([
      expect.objectContaining({ hook: 'system', status: 202, body: expect.objectContaining({ project_id: fresh.id, ref: 'main' }) }),
    ]);
    await searchFinds(fresh.id, 'schedule payroll batch employees', 'src/payroll-batch.ts');
    expect(await service.prisma.project.findUniqueOrThrow({ where: { gitlabProjectId: fresh.id } })).toMatchObject({
      id: fresh.id,
      fullPath: 'fresh/service',
      webUrl: `${gitlab.url}/fresh/service`,
      visibility: 'internal',
      repositoryUrl: `${gitlab.url}/fresh/service.git`,
    });

    // A project the service token may not read: acknowledged, not indexed, not mirrored.
    const hidden = gitlab.addProject({ namespace: gitlab.addUser({ username: 'private-person' }), path: 'diary', visibility: 'private' });
    const pushed = gitlab.git.push({ fullPath: 'private-person/diary', from: work.path, branch: 'main' });
    const ignored = await gitlab.hooks.deliverPush({ project: hidden, branch: 'main', ...pushed, user: pusher });
    expect(ignored).toEqual([
      expect.objectContaining({
        status: 200,
        body: { ignored: expect.stringMatching(/has no project .* GITLAB_SERVICE_TOKEN may read/), event_name: 'push' },
      }),
    ]);
    expect(await service.prisma.project.findUnique({ where: { id: hidden.id } })).toBeNull();

    const other = await gitlab.hooks.deliverSystemEvent({ event_name: 'project_create', project_id: 999, name: 'x', path: 'x' });
    expect(other).toEqual([expect.objectContaining({ status: 200, body: expect.objectContaining({ event_name: 'project_create' }) })]);
  }, 90_000);

  it('refuses a system hook event with a wrong or missing token, and a project hook event without its project secret', async () => {
    const body = {
      object_kind: 'push',
      event_name: 'push',
      before: '0'.repeat(40),
      after: work.head(),
      ref: 'refs/heads/main',
      project_id: api.id,
      project: { id: api.id, path_with_namespace: 'platform/api' },
    };
    for (const headers of [{ 'X-Gitlab-Token': 'not-the-system-hook-token' }, {}] as Array<Record<string, string>>) {
      const response = await fetch(hookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Gitlab-Event': 'System Hook', ...headers },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(401);
    }
    const projectHook = await fetch(hookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Gitlab-Event': 'Push Hook', 'X-Gitlab-Token': SYSTEM_HOOK_TOKEN },
      body: JSON.stringify(body),
    });
    expect(projectHook.status).toBe(401);
  });

  it('fails an index run whose clone GitLab refuses with a clear error, the token in no log line', async () => {
    const wrong = `glpat-${randomBytes(10).toString('hex')}`;
    const run = await runCli('index-repository', ['--project', 'platform/backend/worker'], {
      ...cliEnv,
      GITLAB_SERVICE_TOKEN: wrong,
      LOG_LEVEL: 'debug',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/refused GITLAB_SERVICE_TOKEN for the repository .*platform\/backend\/worker\.git: .*read_repository/);
    expect(run.stdout + run.stderr).not.toContain(wrong);
    expect(run.stdout + run.stderr).not.toContain(Buffer.from(`duo-slice:${wrong}`).toString('base64'));
    expect(gitlab.git.requests.some((request) => request.token === wrong && request.status === 401)).toBe(true);
  }, 60_000);
});
