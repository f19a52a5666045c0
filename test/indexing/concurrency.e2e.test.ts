import type { ChildProcess } from 'node:child_process';
import type { Project } from '../../src/db/prisma';
import { requestIndexRun } from '../../src/indexing/code-index.service';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { filesWithoutChunks } from '../helpers/index-integrity';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';
import { spawnWorker } from '../helpers/worker-process';

const SEARCH = `query($path: ID!, $query: String!, $ref: String) { codebaseSearch(projectPath: $path, query: $query, ref: $ref) { path } }`;
const BRANCHES = ['main', 'feature/a', 'feature/b'];
const ROUNDS = 5;

/** A module every branch changes in turn, sometimes back to what another branch had (so runs reuse each other's blobs). */
const shared = (version: number) =>
  `/** Shared helpers, version ${version}. */\n` +
  `export function sharedHelper${version}(value: number): number {\n  return value * ${version};\n}\n`;

// The scale-out topology: two API processes and two workers with INDEX_CONCURRENCY=2, several branches
// of one project pushed to again and again while searches run. No search may come back empty because an
// index was replaced under it, and every file of every ready snapshot must have its chunks.
describe('indexing several branches under repeated pushes while searches run', () => {
  let api: TestService;
  let secondApi: TestService;
  let repo: GitRepo;
  let project: Project;
  let user: UserWithToken;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    api = await startTestService({ role: 'api' });
    const { config } = api.running.services;
    secondApi = await startTestService({ role: 'api', env: { DATABASE_URL: config.databaseUrl!, REDIS_PREFIX: api.redisPrefix } });
    const env = {
      DATABASE_URL: config.databaseUrl!,
      REDIS_PREFIX: api.redisPrefix,
      DATA_DIR: config.dataDir,
      LOG_LEVEL: 'warn',
      INDEX_CONCURRENCY: '2',
      INDEX_THREADS: '1',
      DEMO_SEED: 'false',
    };
    workers.push(spawnWorker(env), spawnWorker(env));
    repo = createGitRepo({ ...SAMPLE_FILES, 'src/shared.ts': shared(0) });
    for (const branch of BRANCHES.slice(1)) repo.git('branch', branch);
    user = await userWithToken(api.prisma);
    const groupPath = await groupWithSeat(api.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    project = (await createProject(api.prisma, { fullPath: `${groupPath}/${unique('code')}`, repository: repo.path })).project;
    await addMember(api.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
  }, 60_000);
  afterAll(async () => {
    for (const worker of workers) worker.kill('SIGKILL');
    await secondApi?.close();
    await api?.close();
    repo?.destroy();
  });

  const push = (ref: string) =>
    requestIndexRun(
      { prisma: api.prisma, queues: api.running.services.queues },
      { projectId: project.id, ref, reason: 'push', commitSha: repo.git('rev-parse', ref) },
    );
  const heads = () => new Map(BRANCHES.map((branch) => [branch, repo.git('rev-parse', branch)]));
  const allIndexed = async () => {
    const indexes = await api.prisma.codeIndex.findMany({ where: { projectId: project.id } });
    const expected = heads();
    return (
      indexes.length === BRANCHES.length && indexes.every((index) => index.state === 'ready' && index.commitSha === expected.get(index.ref))
    );
  };

  it('never answers a search with nothing and leaves no ready file without chunks', async () => {
    for (const branch of BRANCHES) await push(branch);
    await waitUntil(allIndexed, { what: 'every branch to be indexed', timeoutMs: 60_000, intervalMs: 200 });

    let searching = true;
    const answers: number[] = [];
    const failures: unknown[] = [];
    const searchers = [api, secondApi, api, secondApi].map(async (service, position) => {
      for (let count = 0; searching; count += 1) {
        const ref = BRANCHES[(position + count) % BRANCHES.length];
        const response = await service.graphql<{ codebaseSearch: Array<{ path: string }> }>(SEARCH, {
          variables: { path: project.fullPath, query: 'parse a connection string', ref },
          token: user.token,
        });
        if (response.body.errors) failures.push(response.body.errors);
        else answers.push(response.body.data!.codebaseSearch.length);
      }
    });
    try {
      for (let round = 1; round <= ROUNDS; round += 1) {
        for (const [position, branch] of BRANCHES.entries()) {
          repo.git('checkout', '-q', branch);
          // Each branch writes what another one had a round before: blobs go out of one branch's index and into another's.
          repo.write('src/shared.ts', shared((round + position) % 3));
          repo.write(`src/${branch.replace('/', '-')}-round.ts`, `export const round = ${round};\n`);
          repo.commit(`round ${round} on ${branch}`);
          await push(branch);
        }
        repo.git('checkout', '-q', 'main');
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await filesWithoutChunks(api.prisma, project.id)).toEqual([]);
      }
      await waitUntil(allIndexed, { what: 'every branch to be indexed at its last push', timeoutMs: 90_000, intervalMs: 200 });
    } finally {
      searching = false;
      await Promise.all(searchers);
    }
    expect(failures).toEqual([]);
    expect(answers.length).toBeGreaterThan(20);
    expect(answers.filter((files) => files === 0)).toEqual([]);
    expect(await filesWithoutChunks(api.prisma, project.id)).toEqual([]);
    const runs = await api.prisma.codeIndex.findMany({ where: { projectId: project.id }, select: { ref: true, filesIndexed: true } });
    expect(runs.every((index) => index.filesIndexed >= Object.keys(SAMPLE_FILES).length + 1)).toBe(true);
  }, 180_000);
});
