import type { Project } from '../../src/db/prisma';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { readJson } from '../helpers/http';
import { startTestService, type TestService } from '../helpers/test-service';
import { postPushHook } from '../helpers/push-hook';

const SECRET = 'webhook-secret-for-tests-0123456789';
const CODE_INDEX = `query($path: ID!) { project(fullPath: $path) { codeIndex { state lastError } } }`;
const CREATE_INDEX = `mutation($path: ID!) { projectCodeIndexCreate(input: { projectPath: $path }) { jobId errors } }`;
const SEARCH = `query($path: ID!) { codebaseSearch(projectPath: $path, query: "compute the vat amount") { path } }`;

// Threats: the push webhook as an oracle for which private projects exist (and a free field for
// guessing secrets), and error messages that show users the server's paths.
describe('webhook enumeration and rate limit; no server paths in messages', () => {
  let service: TestService;
  let maintainer: UserWithToken;
  let groupPath: string;
  let project: Project;

  beforeAll(async () => {
    service = await startTestService({ role: 'all', env: { INDEX_DEBOUNCE_MS: '0', WEBHOOK_RATE_LIMIT_PER_MINUTE: '8' } });
    maintainer = await userWithToken(service.prisma);
    groupPath = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: maintainer.username });
    project = (
      await createProject(service.prisma, {
        fullPath: `${groupPath}/${unique('private')}`,
        webhookSecret: SECRET,
        visibility: 'private',
        repository: '/etc',
      })
    ).project;
    await addMember(service.prisma, { fullPath: project.fullPath, username: maintainer.username, accessLevel: 'maintainer' });
  });
  afterAll(() => service.close());

  const push = (projectPath: string, secret: string) =>
    postPushHook(
      service.url,
      {
        object_kind: 'push',
        ref: 'refs/heads/main',
        before: '0'.repeat(40),
        after: 'a'.repeat(40),
        project: { path_with_namespace: projectPath },
      },
      { token: secret },
    );

  it('answers a missing project exactly as an existing one with a wrong secret (case 5)', async () => {
    const existing = await push(project.fullPath, 'wrong-secret-wrong-secret');
    const missing = await push(`${groupPath}/does-not-exist`, 'wrong-secret-wrong-secret');
    expect(existing.status).toBe(401);
    expect(missing.status).toBe(existing.status);
    expect(await readJson(missing)).toEqual(await readJson(existing));
  });

  it('limits webhook calls per address: guessing secrets is refused with 429 (case 5)', async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 12; attempt += 1)
      statuses.push((await push(project.fullPath, `guess-${attempt}-xxxxxxxxxxxxxxxx`)).status);
    expect(statuses).toContain(429);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(8);
    // Even the right secret waits for the window: the limit is per address, before the secret is looked at.
    expect((await push(project.fullPath, SECRET)).status).toBe(429);
  });

  it('a failed index says what to fix without the server path, in codeIndex.lastError and in search answers (case 6)', async () => {
    const created = await service.graphql(CREATE_INDEX, { variables: { path: project.fullPath }, token: maintainer.token });
    expect(created.body.errors).toBeUndefined();
    const started = Date.now();
    type Index = { state: string; lastError: string | null };
    let index: Index | null = null as Index | null;
    while (index?.state !== 'FAILED') {
      if (Date.now() - started > 20_000) throw new Error(`index never failed: ${JSON.stringify(index)}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
      index = (
        await service.graphql<{ project: { codeIndex: Index | null } }>(CODE_INDEX, {
          variables: { path: project.fullPath },
          token: maintainer.token,
        })
      ).body.data!.project.codeIndex;
    }
    if (!index) throw new Error('no index');
    expect(index.lastError).toContain('not a git repository');
    expect(index.lastError).not.toContain('/etc');
    const search = await service.graphql(SEARCH, { variables: { path: project.fullPath }, token: maintainer.token });
    expect(search.body.errors?.[0]?.message).toContain('failed');
    expect(search.body.errors?.[0]?.message).not.toContain('/etc');
  });

  it('an error stored with a path (git failed in <path>) is shown without it (case 6)', async () => {
    await service.prisma.codeIndex.updateMany({
      where: { projectId: project.id },
      data: { state: 'failed', lastError: 'git rev-parse failed in /srv/data/repositories/7.git: fatal: bad object' },
    });
    const index = (
      await service.graphql<{ project: { codeIndex: { lastError: string } } }>(CODE_INDEX, {
        variables: { path: project.fullPath },
        token: maintainer.token,
      })
    ).body.data!.project.codeIndex;
    expect(index.lastError).toBe('git rev-parse failed in <path>: fatal: bad object');
  });
});
