import type { ChildProcess } from 'node:child_process';
import type { Project } from '../../src/db/prisma';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { KEYWORD_INDEX_FORMAT } from '../../src/search/lexical-index';
import { configureLexicalCache, lexicalIndexKept } from '../../src/search/lexical-search';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { parseScrape, valueOf } from '../helpers/prometheus';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';
import { spawnWorker } from '../helpers/worker-process';
import { postPushHook } from '../helpers/push-hook';

const SECRET = 'webhook-secret-for-warm-up-0123456789';
const SEARCH = `query($path: ID!, $query: String!) { codebaseSearch(projectPath: $path, query: $query) { path } }`;

// The first question about a pushed branch should not wait for its keyword index: the API process
// builds it when the worker (another process here) activates the snapshot, before any search.
describe("a new snapshot's keyword index, built before its first search", () => {
  let api: TestService;
  let worker: ChildProcess;
  let repo: GitRepo;
  let project: Project;
  let user: UserWithToken;

  const activeSnapshot = async () =>
    (await api.prisma.codeIndex.findUnique({ where: { projectId_ref: { projectId: project.id, ref: 'main' } } }))?.activeSnapshotId ?? null;
  const builds = async (trigger: 'search' | 'warm_up', outcome: 'built' | 'loaded' = 'built') => {
    const scrape = parseScrape(await (await fetch(`${api.url}/-/metrics`)).text());
    return valueOf(scrape, 'duo_search_keyword_index_builds_total', { trigger, outcome });
  };
  const storedSnapshots = async () =>
    (
      await api.prisma.codeSnapshotKeywordIndex.findMany({
        where: { snapshot: { index: { projectId: project.id } } },
        select: { snapshotId: true, format: true },
      })
    ).map((row) => [row.snapshotId, row.format]);
  const push = (before: string) =>
    postPushHook(
      api.url,
      {
        object_kind: 'push',
        ref: 'refs/heads/main',
        before,
        after: repo.head(),
        checkout_sha: repo.head(),
        total_commits_count: 1,
        project: { id: project.id, path_with_namespace: project.fullPath, default_branch: 'main' },
        commits: [],
      },
      { token: SECRET },
    );

  beforeAll(async () => {
    api = await startTestService({ role: 'api', env: { INDEX_DEBOUNCE_MS: '0' } });
    worker = spawnWorker({
      DATABASE_URL: api.running.services.config.databaseUrl!,
      REDIS_PREFIX: api.redisPrefix,
      DATA_DIR: api.running.services.config.dataDir,
      LOG_LEVEL: 'warn',
      INDEX_DEBOUNCE_MS: '0',
    });
    repo = createGitRepo(SAMPLE_FILES);
    user = await userWithToken(api.prisma);
    const group = await groupWithSeat(api.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    project = (await createProject(api.prisma, { fullPath: `${group}/${unique('warm')}`, repository: repo.path, webhookSecret: SECRET }))
      .project;
    await addMember(api.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
  });
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await api.close();
    repo.destroy();
  });

  it('is built in the API process when a push is indexed by the worker, and the replaced one is dropped', async () => {
    expect((await push('0'.repeat(40))).status).toBe(202);
    const first = await waitUntil(activeSnapshot, { until: (id) => id !== null, timeoutMs: 60_000, what: 'the first snapshot' });
    await waitUntil(() => lexicalIndexKept({ projectId: project.id, snapshotId: first! }), {
      until: Boolean,
      timeoutMs: 15_000,
      what: "the first snapshot's keyword index, without a search",
    });
    expect(await builds('warm_up')).toBe(1);
    expect(await builds('search')).toBe(0);

    const before = repo.head();
    repo.write(
      'src/billing/invoice-total.ts',
      'export function invoiceTotal(lines: number[]) {\n  return lines.reduce((a, b) => a + b, 0);\n}\n',
    );
    repo.commit('add invoice totals');
    expect((await push(before)).status).toBe(202);
    const second = await waitUntil(activeSnapshot, {
      until: (id) => id !== null && id !== first,
      timeoutMs: 60_000,
      what: 'the new snapshot',
    });
    await waitUntil(() => lexicalIndexKept({ projectId: project.id, snapshotId: second! }), {
      until: Boolean,
      timeoutMs: 15_000,
      what: "the new snapshot's keyword index, without a search",
    });
    expect(lexicalIndexKept({ projectId: project.id, snapshotId: first! })).toBe(false);
    expect(await builds('warm_up')).toBe(2);
    // Stored for the next process (the first one's went with its snapshot).
    await waitUntil(storedSnapshots, { until: (rows) => rows.length === 1, what: "the new snapshot's stored keyword index" });
    expect(await storedSnapshots()).toEqual([[second, KEYWORD_INDEX_FORMAT]]);

    // The first question uses the index built ahead of it.
    const response = await api.graphql<{ codebaseSearch: Array<{ path: string }> }>(SEARCH, {
      variables: { path: project.fullPath, query: 'invoice total of the lines' },
      token: user.token,
    });
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data!.codebaseSearch.map((hit) => hit.path)).toContain('src/billing/invoice-total.ts');
    expect(await builds('search')).toBe(0);

    // A process that does not hold it (here: this one, its cache emptied) loads the stored form, and answers the same.
    configureLexicalCache(api.running.services.config.searchIndexCacheMb * 1024 * 1024);
    const again = await api.graphql<{ codebaseSearch: Array<{ path: string }> }>(SEARCH, {
      variables: { path: project.fullPath, query: 'invoice total of the lines' },
      token: user.token,
    });
    expect(again.body.data).toEqual(response.body.data);
    expect(await builds('search', 'loaded')).toBe(1);
    expect(await builds('search')).toBe(0);
  });
});
