import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

const CREATE =
  'mutation($input: ProjectCodeIndexCreateInput!) { projectCodeIndexCreate(input: $input) { jobId errors codeIndex { ref state } } }';
const STATE = 'query($path: ID!) { project(fullPath: $path) { codeIndex { state finishedAt } } }';

// This machine's PostgreSQL runs without autovacuum, as the embedded database does: the worker keeps the statistics.
describe('table statistics after an index run, through the queue', () => {
  let service: TestService;
  let maintainer: UserWithToken;
  let group: string;
  const repos: GitRepo[] = [];

  beforeAll(async () => {
    service = await startTestService({ role: 'all' });
    maintainer = await userWithToken(service.prisma);
    group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
  });
  afterAll(async () => {
    await service?.close();
    for (const repo of repos) repo.destroy();
  });

  async function indexProject(files: Record<string, string>): Promise<void> {
    const repo = createGitRepo(files);
    repos.push(repo);
    const { project } = await createProject(service.prisma, { fullPath: `${group}/${unique('stats')}`, repository: repo.path });
    await addMember(service.prisma, { fullPath: project.fullPath, username: maintainer.username, accessLevel: 'maintainer' });
    const started = await service.graphql(CREATE, { variables: { input: { projectPath: project.fullPath } }, token: maintainer.token });
    expect(started.body.errors).toBeUndefined();
    await waitUntil(
      async () =>
        (
          await service.graphql<{ project: { codeIndex: { state: string } | null } }>(STATE, {
            variables: { path: project.fullPath },
            token: maintainer.token,
          })
        ).body.data?.project.codeIndex?.state,
      { until: (state) => state === 'READY', timeoutMs: 30_000, intervalMs: 100, what: `the index of ${project.fullPath}` },
    );
  }

  const estimatedAndCounted = async () => {
    const [row] = await service.prisma.$queryRaw<Array<{ estimated: number; counted: number }>>`
      SELECT (SELECT reltuples::int FROM pg_class WHERE relname = 'code_chunks') AS estimated,
             (SELECT count(*)::int FROM code_chunks) AS counted`;
    return row;
  };

  it("measures the code tables after a project's first run, even when it grew them by less than a tenth", async () => {
    // Large enough to be measured (MIN_ANALYZED_PAGES): each function a chunk of its own, about 800 in all.
    const body = (index: number) => Array.from({ length: 30 }, (_, line) => `  total += value * ${line} + ${index};`).join('\n');
    const large = Object.fromEntries(
      Array.from({ length: 400 }, (_, index) => [
        `src/module${index}.ts`,
        `export function first${index}(value: number): number {\n  let total = 0;\n${body(index)}\n  return total;\n}\n\n` +
          `export function second${index}(value: number): number {\n  let total = 1;\n${body(index + 1)}\n  return total;\n}\n`,
      ]),
    );
    await indexProject(large);
    await waitUntil(estimatedAndCounted, {
      until: (row) => row.estimated === row.counted,
      timeoutMs: 10_000,
      intervalMs: 100,
      what: 'the statistics of the first project',
    });
    // A project of one file: a few rows more, far from the tenth that would make the tables stale.
    await indexProject({ 'src/small.ts': 'export const small = 1;\n' });
    const row = await waitUntil(estimatedAndCounted, {
      until: (counts) => counts.estimated === counts.counted,
      timeoutMs: 10_000,
      intervalMs: 100,
      what: 'the statistics to count the second project',
    });
    expect(row.counted).toBeGreaterThan(300);
  }, 60_000);
});
