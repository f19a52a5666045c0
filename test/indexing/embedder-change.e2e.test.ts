import { loadConfig } from '../../src/config';
import type { Project } from '../../src/db/prisma';
import { indexRepository } from '../../src/indexing/index-repository';
import { LexicalEmbedder } from '../../src/llm/embedders/lexical.embedder';
import { createLogger } from '../../src/logger';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { startService } from '../../src/start-service';
import { groupWithSeat, unique, userWithToken } from '../helpers/fixtures';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

const SEARCH = `query($path: ID!, $q: String!) { codebaseSearch(projectPath: $path, query: $q) { path } }`;

// After the embedder changes, a starting worker rebuilds the indexes made with the old one; search
// keeps answering from the old vectors (a lexical embedder of their size) until the new ones are complete.
describe('switching the embedder', () => {
  let api: TestService;
  let worker: TestService | null = null;
  let repo: GitRepo;
  let project: Project;

  beforeAll(async () => {
    api = await startTestService({ role: 'api' });
    repo = createGitRepo(SAMPLE_FILES);
    const group = await groupWithSeat(api.prisma, { plan: 'ultimate' });
    project = (await createProject(api.prisma, { fullPath: `${group}/${unique('switch')}`, repository: repo.path })).project;
    await indexRepository({
      prisma: api.prisma,
      embedder: new LexicalEmbedder({ dimensions: 256 }),
      logger: createLogger('silent'),
      dataDir: api.running.services.config.dataDir,
      projectId: project.id,
      ref: 'main',
    });
  });
  afterAll(async () => {
    await worker?.close();
    await api.close();
    repo.destroy();
  });

  it('serves the old vectors, then rebuilds with the configured embedder when a worker starts', async () => {
    const user = await userWithToken(api.prisma);
    await groupWithSeat(api.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    await addMember(api.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'reporter' });
    const before = await api.graphql<{ codebaseSearch: Array<{ path: string }> }>(SEARCH, {
      token: user.token,
      variables: { path: project.fullPath, q: 'retry with backoff' },
    });
    expect(before.body.data!.codebaseSearch[0].path).toBe('src/retry.py');

    const config = api.running.services.config;
    const running = await startService({
      config: loadConfig({
        DATABASE_URL: config.databaseUrl!,
        REDIS_URL: config.redisUrl,
        REDIS_PREFIX: config.redisPrefix,
        DATA_DIR: config.dataDir,
        LOG_LEVEL: 'silent',
        DEMO_SEED: 'false',
        PORT: '0',
      }),
      logger: createLogger('silent'),
      role: 'worker',
    });
    worker = { close: () => running.close() } as TestService;
    await waitUntil(
      () =>
        api.prisma.codeIndex.findUniqueOrThrow({
          where: { projectId_ref: { projectId: project.id, ref: 'main' } },
          include: { activeSnapshot: true },
        }),
      {
        until: (index) => index.activeSnapshot?.embedderVersion === 'lexical-v2-512',
        timeoutMs: 20_000,
        what: 'the rebuild with the new embedder',
      },
    );
    const after = await api.graphql<{ codebaseSearch: Array<{ path: string }> }>(SEARCH, {
      token: user.token,
      variables: { path: project.fullPath, q: 'retry with backoff' },
    });
    expect(after.body.data!.codebaseSearch[0].path).toBe('src/retry.py');
    // The run collects the old embedder's chunks once its snapshot is active.
    const versions = await waitUntil(
      () =>
        api.prisma.$queryRawUnsafe<Array<{ embedder_version: string }>>(
          'SELECT DISTINCT embedder_version FROM code_chunks WHERE project_id = $1',
          project.id,
        ),
      { until: (rows) => rows.length === 1, timeoutMs: 10_000, what: "the old embedder's chunks to be collected" },
    );
    expect(versions).toEqual([{ embedder_version: 'lexical-v2-512' }]);
  });
});
