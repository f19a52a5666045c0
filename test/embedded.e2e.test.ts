import { readFileSync } from 'node:fs';
import { openDatabase } from '../src/db/database';
import { createLogger } from '../src/logger';
import { addMember, createProject } from '../src/namespaces/namespaces.service';
import { groupWithSeat, unique, userWithToken } from './helpers/fixtures';
import { BILLING_FILES, createGitRepo, type GitRepo } from './helpers/git-repo';
import { runCli } from './helpers/run-cli';
import { startTestService, type TestService } from './helpers/test-service';
import { waitUntil } from './helpers/wait';

// The default a newcomer gets: PGlite with pgvector under DATA_DIR, no PostgreSQL needed.
describe('embedded database (PGlite)', () => {
  let service: TestService;
  let dataDir: string;

  beforeAll(async () => {
    service = await startTestService({ embedded: true, env: { DEMO_SEED: 'true' } });
    dataDir = service.running.services.config.dataDir;
  });
  afterAll(() => service?.close());

  it('migrates, creates the vector extension and seeds the demo on first start', async () => {
    expect(service.running.database.kind).toBe('embedded');
    const [vector] = await service.prisma.$queryRawUnsafe<Array<{ extversion: string }>>(
      "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
    );
    expect(vector?.extversion).toMatch(/^0\.8\./);
    const [distance] = await service.prisma.$queryRawUnsafe<Array<{ distance: number }>>(
      "SELECT '[1,0]'::vector <=> '[0,1]'::vector AS distance",
    );
    expect(distance?.distance).toBeCloseTo(1);
    expect(service.running.demo?.token).toMatch(/^glpat-/);
  });

  it('serves currentUser with the demo token, with Duo Enterprise features', async () => {
    const { body } = await service.graphql<{
      currentUser: { username: string; duoChatAvailable: boolean; duoChatAvailableFeatures: string[] };
    }>('{ currentUser { username duoChatAvailable duoChatAvailableFeatures } project(fullPath: "demo-group/duo-slice") { fullPath } }', {
      token: service.running.demo!.token,
    });
    expect(body.errors).toBeUndefined();
    expect(body.data?.currentUser).toMatchObject({ username: 'demo', duoChatAvailable: true });
    expect(body.data?.currentUser.duoChatAvailableFeatures).toContain('include_merge_request_context');
    expect(body.data).toMatchObject({ project: { fullPath: 'demo-group/duo-slice' } });
  });

  it('publishes its socket in a lock file and refuses to open the directory twice', async () => {
    const lock = JSON.parse(readFileSync(`${dataDir}/pglite.lock`, 'utf8'));
    expect(lock).toEqual({ pid: process.pid, socketPath: expect.stringMatching(/\.s\.PGSQL\.5432$/) });
    await expect(
      openDatabase({ databaseUrl: undefined, dataDir, logger: createLogger('silent'), embeddedRole: 'owner' }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('runs admin commands while the service runs, through its socket', async () => {
    const created = await runCli('admin', ['create-user', '--username', 'carol', '--email', 'carol@example.com'], { DATA_DIR: dataDir });
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ username: 'carol' });
    expect(await service.prisma.user.count({ where: { username: 'carol' } })).toBe(1);

    const token = await runCli('admin', ['create-token', '--username', 'carol', '--scopes', 'read_api'], { DATA_DIR: dataDir });
    expect(token.code).toBe(0);
    const { body } = await service.graphql('{ currentUser { username } }', { token: JSON.parse(token.stdout).token });
    expect(body.data).toEqual({ currentUser: { username: 'carol' } });
  });

  it('prints a demo token with seed:demo, as one JSON line', async () => {
    const seeded = await runCli('seed-demo', [], { DATA_DIR: dataDir });
    expect(seeded.code).toBe(0);
    const lines = seeded.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const answer = JSON.parse(lines[0]);
    expect(answer).toEqual({
      token: expect.stringMatching(/^glpat-/),
      username: 'demo',
      project: 'demo-group/duo-slice',
      url: expect.stringMatching(/\/api\/graphql$/),
    });
    const { body } = await service.graphql('{ currentUser { username } }', { token: answer.token });
    expect(body.data).toEqual({ currentUser: { username: 'demo' } });
  });

  it('opens the data directory directly once the service has stopped', async () => {
    await service.running.close();
    const logger = createLogger('silent');
    const database = await openDatabase({ databaseUrl: undefined, dataDir, logger, embeddedRole: 'client' });
    try {
      expect(database.kind).toBe('embedded');
      expect(await database.prisma.user.count({ where: { username: 'carol' } })).toBe(1);
      await expect(openDatabase({ databaseUrl: undefined, dataDir, logger, embeddedRole: 'owner' })).rejects.toMatchObject({
        code: 'CONFLICT',
      });
    } finally {
      await database.close();
    }
  });
});

// Search on the embedded default: an index its own worker builds, asked through GraphQL.
describe('codebaseSearch on the embedded database (PGlite)', () => {
  let service: TestService;
  let repo: GitRepo;

  beforeAll(async () => {
    service = await startTestService({ embedded: true, role: 'all', env: { INDEX_DEBOUNCE_MS: '0' } });
    repo = createGitRepo(BILLING_FILES);
  });
  afterAll(async () => {
    await service?.close();
    repo?.destroy();
  });

  it('indexes a repository and finds code by what it does and by an identifier it names', async () => {
    const user = await userWithToken(service.prisma);
    const groupPath = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    const { project } = await createProject(service.prisma, { fullPath: `${groupPath}/${unique('code')}`, repository: repo.path });
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
    const search = (query: string) =>
      service.graphql<{ codebaseSearch: Array<{ path: string; symbol: string | null }> }>(
        'query($path: ID!, $query: String!) { codebaseSearch(projectPath: $path, query: $query, first: 5) { path symbol } }',
        { variables: { path: project.fullPath, query }, token: user.token },
      );
    // The first search starts indexing and says so; the worker in this process builds the index.
    expect((await search('vat amount')).body.errors?.[0]).toMatchObject({ extensions: { code: 'CONFLICT' } });
    await waitUntil(() => search('vat amount'), {
      until: (response) => !response.body.errors && response.body.data!.codebaseSearch.length > 0,
      timeoutMs: 60_000,
      intervalMs: 200,
      what: 'the embedded index to answer',
    });
    const prose = await search('how is the vat amount computed for a line');
    expect(prose.body.data?.codebaseSearch[0]).toMatchObject({ path: 'src/billing/tax.ts' });
    const named = await search('where is applyLoyaltyDiscount defined');
    expect(named.body.data?.codebaseSearch[0]).toMatchObject({ path: 'src/billing/discount.ts', symbol: 'applyLoyaltyDiscount' });
  }, 90_000);
});
