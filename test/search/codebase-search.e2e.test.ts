import type { Project } from '../../src/db/prisma';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { readCodebase } from '../../src/search/read-codebase';
import { vectorRanking } from '../../src/search/search-code';
import { LexicalEmbedder } from '../../src/llm/embedders/lexical.embedder';
import { toSql } from 'pgvector';
import { groupWithSeat, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { BILLING_FILES, createGitRepo, type GitRepo } from '../helpers/git-repo';
import { readJson } from '../helpers/http';
import { scopeChecks, sentStatements } from '../helpers/sent-statements';
import { startTestService, type TestService } from '../helpers/test-service';
import { waitUntil } from '../helpers/wait';

const SEARCH = `query($path: ID!, $query: String!, $directory: String, $ref: String, $first: Int) {
  codebaseSearch(projectPath: $path, query: $query, directory: $directory, ref: $ref, first: $first) { path startLine endLine content score
  language symbol blobId }
}`;
const CODE_INDEX = `query($path: ID!, $ref: String) { project(fullPath: $path) { codeIndex(ref: $ref) { state commitSha } } }`;

type Hit = {
  path: string;
  startLine: number;
  endLine: number;
  content: string;
  score: number;
  language: string | null;
  symbol: string | null;
  blobId: string;
};

// Codebase search through GraphQL and GitLab's REST endpoint, on an index built by the real worker.
describe('codebaseSearch and /projects/:id/search/semantic', () => {
  let service: TestService;
  let repo: GitRepo;
  let project: Project;
  let user: UserWithToken;
  let groupPath: string;

  async function waitReady(path: string, token: string, ref?: string) {
    await waitUntil(
      () => service.graphql<{ project: { codeIndex: { state: string } | null } }>(CODE_INDEX, { variables: { path, ref }, token }),
      {
        until: (response) => response.body.data?.project?.codeIndex?.state === 'READY',
        timeoutMs: 20_000,
        intervalMs: 100,
        what: 'the index to be READY',
      },
    );
  }

  const search = (variables: Record<string, unknown>, token = user.token) =>
    service.graphql<{ codebaseSearch: Hit[] }>(SEARCH, { variables: { path: project.fullPath, ...variables }, token });

  beforeAll(async () => {
    service = await startTestService({ role: 'all', env: { INDEX_DEBOUNCE_MS: '0' } });
    repo = createGitRepo(BILLING_FILES);
    user = await userWithToken(service.prisma);
    groupPath = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    project = (await createProject(service.prisma, { fullPath: `${groupPath}/${unique('code')}`, repository: repo.path })).project;
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
    // The first search of an unindexed project starts indexing and says so.
    const first = await search({ query: 'parse a connection string' });
    expect(first.body.errors?.[0]).toMatchObject({
      message: expect.stringContaining('indexing has started'),
      extensions: { code: 'CONFLICT' },
    });
    await waitReady(project.fullPath, user.token);
  });
  afterAll(async () => {
    await service.close();
    repo.destroy();
  });

  it('finds code by what it does and by identifier pieces, with lines, symbol, language and blob', async () => {
    const response = await search({ query: 'how is the vat amount computed for a line', first: 5 });
    expect(response.body.errors).toBeUndefined();
    const hits = response.body.data!.codebaseSearch;
    expect(hits[0]).toMatchObject({
      path: 'src/billing/tax.ts',
      startLine: 1,
      language: 'typescript',
      blobId: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(hits[0].content).toContain('computeVatAmount');
    expect(hits[0].score).toBeGreaterThan(0);
    expect(hits.length).toBeLessThanOrEqual(5);
    const identifier = await search({ query: 'parse connection' });
    expect(identifier.body.data!.codebaseSearch[0].path).toBe('src/connection.ts');
  });

  it('keeps to a directory, and refuses a directory that climbs out', async () => {
    const hits = (await search({ query: 'invoice total amount', directory: 'src/billing' })).body.data!.codebaseSearch;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((hit) => hit.path.startsWith('src/billing/'))).toBe(true);
    for (const directory of ['../', 'src/../../etc', '..\\x']) {
      const refused = await search({ query: 'invoice', directory });
      expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'directory' });
    }
  });

  it('hides a project the user cannot read exactly like a missing one, and refuses Duo features off and no seat', async () => {
    const stranger = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: stranger.username });
    const hidden = await search({ query: 'invoice' }, stranger.token);
    const missing = await service.graphql(SEARCH, {
      variables: { path: `${groupPath}/does-not-exist`, query: 'invoice' },
      token: stranger.token,
    });
    expect(hidden.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(hidden.body.errors?.[0]?.message).toBe(missing.body.errors?.[0]?.message);
    expect(hidden.body.data?.codebaseSearch ?? null).toBeNull();
    // The policy answers before the directory and ref are looked at: a hidden project's answer says nothing about them.
    for (const variables of [{ directory: '../' }, { ref: 'a..b' }]) {
      const probe = await search({ query: 'invoice', ...variables }, stranger.token);
      expect(probe.body.errors?.[0]).toMatchObject({ message: missing.body.errors?.[0]?.message, extensions: { code: 'NOT_FOUND' } });
    }

    const noSeat = await userWithToken(service.prisma);
    await addMember(service.prisma, { fullPath: project.fullPath, username: noSeat.username, accessLevel: 'developer' });
    expect((await search({ query: 'invoice' }, noSeat.token)).body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    await service.prisma.project.update({ where: { id: project.id }, data: { duoFeaturesEnabled: false } });
    try {
      const off = await search({ query: 'invoice' });
      expect(off.body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' }, message: expect.stringContaining('turned off') });
    } finally {
      await service.prisma.project.update({ where: { id: project.id }, data: { duoFeaturesEnabled: true } });
    }
  });

  it('never returns files the project excludes, even from an index built before the exclusion', async () => {
    const directories = async () =>
      (
        await service.graphql<{ project: { codeIndex: { directories: string[] } } }>(
          'query($path: ID!) { project(fullPath: $path) { codeIndex { directories } } }',
          { token: user.token, variables: { path: project.fullPath } },
        )
      ).body.data!.project.codeIndex.directories;
    expect(await directories()).toContain('src/billing');
    await service.prisma.project.update({ where: { id: project.id }, data: { contextExclusions: ['src/billing/'] } });
    try {
      const hits = (await search({ query: 'vat amount discount loyalty' })).body.data!.codebaseSearch;
      expect(hits.some((hit) => hit.path.startsWith('src/billing/'))).toBe(false);
      // Nor does the directory picker name an excluded directory.
      const after = await directories();
      expect(after).toContain('src');
      expect(after.filter((directory) => directory === 'src/billing' || directory.startsWith('src/billing/'))).toEqual([]);
    } finally {
      await service.prisma.project.update({ where: { id: project.id }, data: { contextExclusions: [] } });
    }
  });

  it('refuses a ref that is not a valid git ref, whatever it holds', async () => {
    for (const ref of ['a..b', '-x', 'ma\u0000in']) {
      const refused = await search({ query: 'invoice', ref });
      expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'ref' });
    }
  });

  it('starts no index run for a ref the repository does not have: NOT_FOUND naming ref, and no index left behind', async () => {
    const before = await service.prisma.codeIndex.count({ where: { projectId: project.id } });
    const refused = await search({ query: 'invoice', ref: `nope-${crypto.randomUUID()}` });
    expect(refused.body.errors?.[0]).toMatchObject({
      message: expect.stringMatching(/has no branch, tag or commit named "nope-/),
      extensions: { code: 'NOT_FOUND', field: 'ref' },
    });
    expect(await service.prisma.codeIndex.count({ where: { projectId: project.id } })).toBe(before);
  });

  it("reads the project, its ref's index and the active snapshot in one statement as Prisma reads them", async () => {
    const index = await service.prisma.codeIndex.findUniqueOrThrow({ where: { projectId_ref: { projectId: project.id, ref: 'main' } } });
    const expected = {
      project: await service.prisma.project.findUniqueOrThrow({ where: { id: project.id } }),
      ref: 'main',
      index,
      snapshot: await service.prisma.codeIndexSnapshot.findUniqueOrThrow({ where: { id: index.activeSnapshotId! } }),
    };
    expect(expected.snapshot.id).toEqual(expect.any(BigInt));
    expect(await readCodebase(service.prisma, { where: { fullPath: project.fullPath } })).toEqual(expected);
    expect(await readCodebase(service.prisma, { where: { id: project.id }, ref: 'main' })).toEqual(expected);
    // A ref indexReadiness refuses is not looked up: the default branch's row comes back, which it then ignores.
    expect(await readCodebase(service.prisma, { where: { id: project.id }, ref: 'a..b' })).toEqual(expected);
    expect(await readCodebase(service.prisma, { where: { id: project.id }, ref: 'no-such-branch' })).toEqual({
      project: expected.project,
      ref: 'no-such-branch',
      index: null,
      snapshot: null,
    });
    expect(await readCodebase(service.prisma, { where: { fullPath: `${groupPath}/does-not-exist` } })).toBeNull();
  });

  const mainSnapshot = async () => {
    const index = await service.prisma.codeIndex.findUniqueOrThrow({ where: { projectId_ref: { projectId: project.id, ref: 'main' } } });
    return service.prisma.codeIndexSnapshot.findUniqueOrThrow({ where: { id: index.activeSnapshotId! } });
  };
  const QUESTIONS = ['how is the vat amount computed for a line', 'parse connection', 'retry with backoff after a failure', 'invoice'];

  it("ranks the project's vectors without a scope check per chunk when the snapshot holds them all, with the same answers", async () => {
    // One indexed branch, garbage collected: the run marked its snapshot.
    const snapshot = await mainSnapshot();
    expect(snapshot.coversProject).toBe(true);
    const fast = await sentStatements(() => Promise.all(QUESTIONS.map((query) => search({ query }))));
    expect(scopeChecks(fast.texts)).toEqual({ searches: QUESTIONS.length, checked: 0 });
    // A directory is still checked per match.
    const directory = await sentStatements(() => search({ query: 'invoice total amount', directory: 'src/billing' }));
    expect(scopeChecks(directory.texts)).toEqual({ searches: 1, checked: 1 });
    // Without the mark: the scope check, and the same answers.
    await service.prisma.codeIndexSnapshot.update({ where: { id: snapshot.id }, data: { coversProject: false } });
    try {
      const checked = await sentStatements(() => Promise.all(QUESTIONS.map((query) => search({ query }))));
      expect(scopeChecks(checked.texts)).toEqual({ searches: QUESTIONS.length, checked: QUESTIONS.length });
      expect(checked.result.map((response) => response.body)).toEqual(fast.result.map((response) => response.body));
    } finally {
      await service.prisma.codeIndexSnapshot.update({ where: { id: snapshot.id }, data: { coversProject: true } });
    }
  });

  it('never returns a chunk stored after the mark was read: it can take a ranked place, and is dropped', async () => {
    // The state between a search's read (the mark) and its ranking statement while another branch's run stores a chunk:
    // the chunk, its placement and a manifest line of that run's snapshot, with the mark still set (storeBatch would clear it).
    const snapshot = await mainSnapshot();
    const other = await service.prisma.codeIndex.create({ data: { projectId: project.id, ref: 'race', state: 'indexing' } });
    const building = await service.prisma.codeIndexSnapshot.create({
      data: {
        indexId: other.id,
        commitSha: 'f'.repeat(40),
        chunkerVersion: snapshot.chunkerVersion,
        embedderVersion: snapshot.embedderVersion,
        settingsDigest: snapshot.settingsDigest,
      },
    });
    const content = 'export function computeVatAmountRacing(line) { return computeVatAmount(line) * vat * amount; }';
    // The racing chunk's vector is the question's own: the nearest of all, unless the scope keeps it out.
    const [question] = await new LexicalEmbedder().embed(['compute vat amount']);
    try {
      await service.prisma.$executeRawUnsafe(
        `INSERT INTO code_chunks (project_id, id, embedder_version, dims, embedding, content, search_text)
         SELECT project_id, 'racing-chunk', embedder_version, dims, NULL, $2, to_tsvector('simple', $3)
           FROM code_chunks WHERE project_id = $1 LIMIT 1`,
        project.id,
        content,
        'compute vat amount racing line compute vat amount vat amount',
      );
      await service.prisma.$executeRawUnsafe(
        `INSERT INTO code_chunk_vectors (project_id, id, dims, embedding) VALUES ($1, 'racing-chunk', 512, $2::vector)`,
        project.id,
        toSql(question),
      );
      await service.prisma.codeBlob.create({ data: { projectId: project.id, blob: 'racing-blob', variant: 'v' } });
      await service.prisma.codeBlobChunk.create({
        data: {
          projectId: project.id,
          blob: 'racing-blob',
          variant: 'v',
          seq: 0,
          chunkId: 'racing-chunk',
          startLine: 1,
          endLine: 1,
          kind: 'function',
          symbol: 'computeVatAmountRacing',
          language: 'typescript',
        },
      });
      await service.prisma.codeIndexFile.create({
        data: { snapshotId: building.id, path: 'src/racing.ts', blob: 'racing-blob', variant: 'v', projectId: project.id },
      });
      expect((await mainSnapshot()).coversProject).toBe(true);
      const scope = { projectId: project.id, snapshotId: snapshot.id, directory: '', vectorGraph: false };
      // Ranked without the check it takes a place (the rankings without occurrences name it); with the check it does not.
      expect((await vectorRanking(service.prisma, { ...scope, coversProject: true }, question, 10)).map((hit) => hit.chunkId)).toContain(
        'racing-chunk',
      );
      expect((await vectorRanking(service.prisma, scope, question, 10)).map((hit) => hit.chunkId)).not.toContain('racing-chunk');
      const { result, texts } = await sentStatements(() => search({ query: 'compute vat amount' }));
      expect(scopeChecks(texts)).toEqual({ searches: 1, checked: 0 });
      const hits = result.body.data!.codebaseSearch;
      expect(hits[0].path).toBe('src/billing/tax.ts');
      expect(hits.some((hit) => hit.path === 'src/racing.ts' || hit.content.includes('Racing'))).toBe(false);
    } finally {
      await service.prisma.codeIndex.delete({ where: { id: other.id } });
      await service.prisma.$executeRawUnsafe(
        "DELETE FROM code_blob_chunks WHERE project_id = $1 AND chunk_id = 'racing-chunk'; ",
        project.id,
      );
      await service.prisma.$executeRawUnsafe("DELETE FROM code_blobs WHERE project_id = $1 AND blob = 'racing-blob'", project.id);
      await service.prisma.$executeRawUnsafe("DELETE FROM code_chunks WHERE project_id = $1 AND id = 'racing-chunk'", project.id);
    }
  });

  it('searches a branch on its own', async () => {
    repo.git('checkout', '-q', '-b', 'feature/shipping');
    repo.write(
      'src/shipping.ts',
      'export function estimateShippingDays(distanceKm: number): number {\n  return Math.ceil(distanceKm / 500);\n}\n',
    );
    repo.commit('shipping');
    repo.git('checkout', '-q', 'main');
    const first = await search({ query: 'shipping days estimate', ref: 'feature/shipping' });
    expect(first.body.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    await waitReady(project.fullPath, user.token, 'feature/shipping');
    const onBranch = (await search({ query: 'shipping days estimate', ref: 'feature/shipping' })).body.data!.codebaseSearch;
    expect(onBranch[0].path).toBe('src/shipping.ts');
    // The branch's run stored chunks main's snapshot lacks: its mark is gone, main's search checks each match again.
    expect((await mainSnapshot()).coversProject).toBe(false);
    const { result, texts } = await sentStatements(() => search({ query: 'shipping days estimate' }));
    expect(scopeChecks(texts)).toEqual({ searches: 1, checked: 1 });
    const onMain = result.body.data!.codebaseSearch;
    expect(onMain.some((hit) => hit.path === 'src/shipping.ts')).toBe(false);
  });

  const semantic = (id: string | number, query: Record<string, string>, token: string | null = user.token) =>
    fetch(`${service.url}/api/v4/projects/${encodeURIComponent(String(id))}/search/semantic?${new URLSearchParams(query).toString()}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });

  it("answers GitLab's REST semantic search in GitLab's shape: files with snippet ranges, a file URL and a confidence", async () => {
    const response = await semantic(project.fullPath, { q: 'retry with backoff after a failure', limit: '3' });
    expect(response.status).toBe(200);
    const body = await readJson(response);
    expect(body).toMatchObject({ confidence: expect.stringMatching(/^(high|medium|low)$/), commit_sha: repo.head(), ref: 'main' });
    expect(body.results.length).toBeLessThanOrEqual(3);
    expect(body.results[0]).toEqual({
      path: 'src/retry.py',
      project_id: project.id,
      language: 'python',
      blob_id: expect.stringMatching(/^[0-9a-f]{40}$/),
      file_url: `${service.url}/${project.fullPath}/-/blob/main/src/retry.py`,
      score: expect.any(Number),
      snippet_ranges: [
        // From the function on: the file's `import time` answers nothing.
        expect.objectContaining({
          start_line: 4,
          end_line: expect.any(Number),
          score: expect.any(Number),
          content: expect.stringMatching(/^def retry_with_backoff/),
        }),
      ],
    });
    // glab's form: the path URL-encoded, and GitLab's optional /-/ segment.
    const byId = await fetch(`${service.url}/api/v4/projects/${project.id}/-/search/semantic?q=invoice&directory_path=lib`, {
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect((await readJson(byId)).results.map((result: { path: string }) => result.path)).toEqual(['lib/invoice.rb']);
    expect((await semantic(project.id, { q: 'invoice', knn: '1', limit: '1' })).status).toBe(200);
    expect((await semantic(project.id, { q: 'x'.repeat(1000), knn: '100', limit: '100' })).status).toBe(200);
  });

  it.each([
    ['q is missing', {}, 'q'],
    ['q is empty', { q: '   ' }, 'q'],
    ['q must be less than 1000 characters', { q: 'x'.repeat(1001) }, 'q'],
    ['knn does not have a valid value', { q: 'x', knn: '101' }, 'knn'],
    ['knn does not have a valid value', { q: 'x', knn: '0' }, 'knn'],
    ['knn is invalid', { q: 'x', knn: 'many' }, 'knn'],
    ['limit does not have a valid value', { q: 'x', limit: '101' }, 'limit'],
    ['limit is invalid', { q: 'x', limit: '2.5' }, 'limit'],
    ['directory_path must not start with / or contain .. segments', { q: 'x', directory_path: '/etc' }, 'directory_path'],
    ['directory_path must not start with / or contain .. segments', { q: 'x', directory_path: 'src/../../etc' }, 'directory_path'],
    ['directory_path must be less than 100 characters', { q: 'x', directory_path: 'a'.repeat(101) }, 'directory_path'],
  ])('answers 400 "%s"', async (message, query, field) => {
    const response = await semantic(project.id, query);
    expect(response.status).toBe(400);
    expect(await readJson(response)).toEqual({ error: message, field });
  });

  it('answers 422 while a project has no embeddings, 404 for a hidden project as for a missing one, 401 without a token', async () => {
    const other = (await createProject(service.prisma, { fullPath: `${groupPath}/${unique('fresh')}`, repository: repo.path })).project;
    await addMember(service.prisma, { fullPath: other.fullPath, username: user.username, accessLevel: 'developer' });
    const fresh = await semantic(other.id, { q: 'invoice' });
    expect(fresh.status).toBe(422);
    expect(await readJson(fresh)).toMatchObject({
      message: `Project '${other.id}' has no embeddings`,
      detail: expect.stringContaining('indexing has started'),
    });

    const stranger = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: stranger.username });
    const hidden = await semantic(project.fullPath, { q: 'invoice' }, stranger.token);
    const missing = await semantic(`${groupPath}/does-not-exist`, { q: 'invoice' }, stranger.token);
    expect(hidden.status).toBe(404);
    expect(await readJson(hidden)).toEqual(await readJson(missing));
    expect((await semantic(project.id, { q: 'x' }, null)).status).toBe(401);
  });
});
