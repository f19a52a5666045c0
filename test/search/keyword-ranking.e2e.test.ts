import type { Project } from '../../src/db/prisma';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { searchCode } from '../../src/search/search-code';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { createGitRepo, type GitRepo } from '../helpers/git-repo';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

const SEARCH = `query($path: ID!, $query: String!) { codebaseSearch(projectPath: $path, query: $query, first: 5) { path } }`;
const CODE_INDEX = `query($path: ID!) { project(fullPath: $path) { codeIndex { state chunkCount } } }`;

/** A module of `functions` functions that all retry a connection: the common words of the question. */
function fillerModule(module: number, functions: number): string {
  return Array.from(
    { length: functions },
    (_, at) => `export function retryConnection${module}x${at}(connection, attempts) {
  // Retry the connection until it answers.
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    if (connection.retry(attempt)) return connection;
  }
  return null;
}
`,
  ).join('\n');
}

// Keyword ranking is exact at any size: the one chunk holding the question's rare words is found
// first however many chunks hold its common ones, and wherever its file sorts (the indexer writes
// files in path order, and a capped scan met the first ones first).
describe('keyword ranking on a repository with many matches', () => {
  let service: TestService;
  let repo: GitRepo;
  let project: Project;
  let user: UserWithToken;

  beforeAll(async () => {
    service = await startTestService({ role: 'all', env: { INDEX_DEBOUNCE_MS: '0' } });
    const files: Record<string, string> = {};
    for (let module = 0; module < 320; module += 1) files[`a/retry-${String(module).padStart(3, '0')}.ts`] = fillerModule(module, 8);
    files['z/backoff.ts'] = `export function nextDelay(attempt) {
  // Exponential backoff with jitter between tries.
  const backoff = 100 * 2 ** attempt;
  return backoff / 2 + Math.random() * (backoff / 2); // jitter
}
`;
    repo = createGitRepo(files);
    user = await userWithToken(service.prisma);
    const groupPath = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    project = (await createProject(service.prisma, { fullPath: `${groupPath}/${unique('keywords')}`, repository: repo.path })).project;
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
    await service.graphql(SEARCH, { variables: { path: project.fullPath, query: 'retry' }, token: user.token });
    await waitUntil(
      () =>
        service.graphql<{ project: { codeIndex: { state: string } | null } }>(CODE_INDEX, {
          variables: { path: project.fullPath },
          token: user.token,
        }),
      {
        until: (response) => response.body.data?.project?.codeIndex?.state === 'READY',
        timeoutMs: 60_000,
        intervalMs: 200,
        what: 'the index to be READY',
      },
    );
  }, 90_000);
  afterAll(async () => {
    await service.close();
    repo.destroy();
  });

  it('finds the chunk with the rare words first among over 500 chunks sharing the common ones, by text alone and fused', async () => {
    const index = await service.prisma.codeIndex.findFirstOrThrow({ where: { projectId: project.id }, include: { activeSnapshot: true } });
    expect(index.chunkCount).toBeGreaterThan(500);
    const question = 'how is the retry delay of a connection spread with jitter and backoff';
    const text = await searchCode({
      prisma: service.prisma,
      embedder: service.running.services.embedder,
      scope: {
        projectId: project.id,
        snapshotId: index.activeSnapshotId!,
        directory: '',
        coversProject: index.activeSnapshot!.coversProject,
        vectorGraph: false,
        embedderVersion: index.activeSnapshot!.embedderVersion,
      },
      query: question,
      mode: 'text',
    });
    expect(text.files[0].path).toBe('z/backoff.ts');
    const fused = await service.graphql<{ codebaseSearch: Array<{ path: string }> }>(SEARCH, {
      variables: { path: project.fullPath, query: question },
      token: user.token,
    });
    expect(fused.body.data!.codebaseSearch[0].path).toBe('z/backoff.ts');
  });
});
