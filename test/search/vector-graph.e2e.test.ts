import type { Project } from '../../src/db/prisma';
import type pg from 'pg';
import { rankByVector, rankByVectorWithOccurrences, type ChunkScope } from '../../src/db/code-chunks';
import { indexRepository, type IndexRepositoryOptions } from '../../src/indexing/index-repository';
import { LexicalEmbedder } from '../../src/llm/embedders/lexical.embedder';
import { createLogger } from '../../src/logger';
import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { indexReadiness } from '../../src/search/index-readiness';
import { groupWithSeat, unique, userWithToken } from '../helpers/fixtures';
import { BILLING_FILES, createGitRepo, type GitRepo } from '../helpers/git-repo';
import { openTestDatabase } from '../helpers/test-database';
import { startTestService, type TestService } from '../helpers/test-service';

const SEARCH = `query($path: ID!, $q: String!) { codebaseSearch(projectPath: $path, query: $q) { path } }`;
const QUESTIONS = ['compute vat amount', 'parse a connection string', 'retry with backoff', 'loyalty discount for years'];

// A project's vectors join the HNSW graph only once it is large (VECTOR_GRAPH_MIN_CHUNKS); until then
// they sit inline in code_chunk_vectors and search ranks them all by exact distance.
describe('vectors outside and inside the HNSW graph', () => {
  const embedder = new LexicalEmbedder();
  let service: TestService;
  let repo: GitRepo;
  let project: Project;
  let token: string;

  const index = (options: Partial<IndexRepositoryOptions> = {}) =>
    indexRepository({
      prisma: service.prisma,
      embedder,
      logger: createLogger('silent'),
      dataDir: service.running.services.config.dataDir,
      projectId: project.id,
      ref: 'main',
      ...options,
    });
  const scopeOf = async (directory = ''): Promise<ChunkScope> => {
    const fresh = await service.prisma.project.findUniqueOrThrow({ where: { id: project.id } });
    const readiness = await indexReadiness({
      prisma: service.prisma,
      queues: service.running.services.queues,
      project: fresh,
      directory,
      startIndexing: false,
    });
    if (readiness.status !== 'ready') throw new Error(`not ready: ${readiness.message}`);
    return readiness.scope;
  };
  const counts = async () => {
    const [row] = await service.prisma.$queryRawUnsafe<Array<{ chunks: bigint; inGraph: bigint; inline: bigint; orphans: bigint }>>(
      `SELECT (SELECT count(*) FROM code_chunks WHERE project_id = $1) AS chunks,
              (SELECT count(*) FROM code_chunks WHERE project_id = $1 AND embedding IS NOT NULL) AS "inGraph",
              (SELECT count(*) FROM code_chunk_vectors WHERE project_id = $1) AS inline,
              (SELECT count(*) FROM code_chunks c WHERE project_id = $1 AND embedding IS NULL
                  AND NOT EXISTS (SELECT 1 FROM code_chunk_vectors v WHERE v.project_id = c.project_id AND v.id = c.id)) AS orphans`,
      project.id,
    );
    return { chunks: Number(row.chunks), inGraph: Number(row.inGraph), inline: Number(row.inline), orphans: Number(row.orphans) };
  };
  /** Every vector of the scope, from wherever the project keeps them, with the chunk's paths in the snapshot. */
  const scopeVectors = async (scope: ChunkScope) => {
    const rows = await service.prisma.$queryRawUnsafe<Array<{ id: string; vector: string; paths: string[] }>>(
      `SELECT c.id, COALESCE(c.embedding, v.embedding)::text AS vector, array_agg(f.path) AS paths
         FROM code_chunks c
         LEFT JOIN code_chunk_vectors v ON v.project_id = c.project_id AND v.id = c.id
         JOIN code_blob_chunks b ON b.project_id = c.project_id AND b.chunk_id = c.id
         JOIN code_index_files f ON f.project_id = b.project_id AND f.blob = b.blob AND f.variant = b.variant
        WHERE c.project_id = $1 AND f.snapshot_id = $2::bigint AND f.path LIKE $3 || '%'
        GROUP BY c.id, c.embedding, v.embedding`,
      scope.projectId,
      scope.snapshotId,
      scope.directory,
    );
    return rows.map((row) => ({ id: row.id, vector: JSON.parse(row.vector) as number[], paths: row.paths }));
  };
  /** Cosine distance in double precision, here in the test, as the reference the database's ranking is held to. */
  const distance = (a: number[], b: number[]) => {
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (let i = 0; i < a.length; i += 1) {
      dot += a[i] * b[i];
      na += a[i] * a[i];
      nb += b[i] * b[i];
    }
    return 1 - dot / Math.sqrt(na * nb);
  };
  /** The ranking is an exact top k of the scope: in distance order, and nothing left out is nearer than its last (float4 slack). */
  const expectExactTop = async (scope: ChunkScope, question: string, k: number) => {
    const [query] = await embedder.embed([question]);
    const ranked = (await rankByVector(service.prisma, scope, query, k)).map((hit) => hit.chunkId);
    const all = await scopeVectors(scope);
    const byId = new Map(all.map((chunk) => [chunk.id, distance(chunk.vector, query)]));
    expect(ranked.length).toBe(Math.min(k, all.length));
    const distances = ranked.map((id) => byId.get(id)!);
    distances.forEach((value, position) => {
      expect(value).toBeDefined();
      if (position > 0) expect(value).toBeGreaterThanOrEqual(distances[position - 1] - 1e-5);
    });
    const last = distances[distances.length - 1];
    for (const chunk of all) if (!ranked.includes(chunk.id)) expect(byId.get(chunk.id)!).toBeGreaterThanOrEqual(last - 1e-5);
    return ranked;
  };
  const firstHit = async (question: string) => {
    const result = await service.graphql<{ codebaseSearch: Array<{ path: string }> }>(SEARCH, {
      token,
      variables: { path: project.fullPath, q: question },
    });
    expect(result.body.errors).toBeUndefined();
    return result.body.data!.codebaseSearch[0]?.path;
  };

  beforeAll(async () => {
    service = await startTestService({ role: 'api' });
    repo = createGitRepo(BILLING_FILES);
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
    project = (await createProject(service.prisma, { fullPath: `${group}/${unique('vectors')}`, repository: repo.path })).project;
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'reporter' });
    token = user.token;
    await index();
  }, 60_000);
  afterAll(async () => {
    await service.close();
    repo.destroy();
  });

  it('keeps a small project out of the graph and ranks its vectors exactly, for the whole snapshot and for a directory', async () => {
    expect((await service.prisma.project.findUniqueOrThrow({ where: { id: project.id } })).vectorGraph).toBe(false);
    const stored = await counts();
    expect(stored.chunks).toBeGreaterThan(5);
    expect(stored).toEqual({ chunks: stored.chunks, inGraph: 0, inline: stored.chunks, orphans: 0 });
    const whole = await scopeOf();
    expect(whole.vectorGraph).toBe(false);
    for (const question of QUESTIONS) await expectExactTop(whole, question, 5);
    // A vector of another size (another embedder's chunk, stored by a run that switches embedders) is never compared: no error, no hit.
    await service.prisma.$executeRawUnsafe(
      `INSERT INTO code_chunks (project_id, id, embedder_version, dims, embedding, content, search_text)
       VALUES ($1, 'other-size', 'lexical-v2-256', 256, NULL, 'compute vat amount', to_tsvector('simple', 'compute vat amount'))`,
      project.id,
    );
    await service.prisma.$executeRawUnsafe(
      `INSERT INTO code_chunk_vectors (project_id, id, dims, embedding)
       VALUES ($1, 'other-size', 256, (SELECT array_agg(1.0 / 16) FROM generate_series(1, 256))::vector)`,
      project.id,
    );
    try {
      const [query] = await embedder.embed(['compute vat amount']);
      const all = await rankByVector(service.prisma, { ...whole, coversProject: true }, query, 1_000);
      expect(all).not.toContainEqual({ chunkId: 'other-size' });
      expect(all.length).toBe(stored.chunks);
    } finally {
      await service.prisma.$executeRawUnsafe("DELETE FROM code_chunks WHERE project_id = $1 AND id = 'other-size'", project.id);
    }
    const billing = await scopeOf('src/billing/');
    const ranked = await expectExactTop(billing, 'compute vat amount', 10);
    const inBilling = await scopeVectors(billing);
    expect(ranked.length).toBe(inBilling.length);
    expect(await firstHit('compute vat amount')).toBe('src/billing/tax.ts');
  });

  it('drops the vectors of chunks no snapshot holds any more', async () => {
    repo.write('src/billing/tax.ts', `${BILLING_FILES['src/billing/tax.ts']}\nexport const VAT_RATE_STANDARD = 19;\n`);
    repo.remove('src/retry.py');
    repo.commit('change tax, drop retry');
    const before = await counts();
    await index();
    const after = await counts();
    expect(after.inGraph).toBe(0);
    expect(after.orphans).toBe(0);
    expect(after.inline).toBe(after.chunks);
    expect(after.chunks).not.toBe(before.chunks);
    await expectExactTop(await scopeOf(), 'compute vat amount', 5);
  });

  it('counts a full rebuild as replacing the stored chunks, not adding to them', async () => {
    const { chunks } = await counts();
    // chunks + the files' estimate would reach chunks + 1; the rebuild's chunks replace the stored ones and do not.
    const result = await index({ force: true, vectorGraphMinChunks: chunks + 1 });
    expect(result).toMatchObject({ outcome: 'indexed', mode: 'full' });
    expect((await service.prisma.project.findUniqueOrThrow({ where: { id: project.id } })).vectorGraph).toBe(false);
    expect(await counts()).toEqual({ chunks, inGraph: 0, inline: chunks, orphans: 0 });
  });

  it('moves the vectors into the graph once the project reaches the threshold, and later batches write there', async () => {
    const answerBefore = await firstHit('compute vat amount');
    repo.write(
      'src/billing/invoice.ts',
      'export function invoiceTotal(lines: number[]): number {\n  return lines.reduce((a, b) => a + b, 0);\n}\n',
    );
    repo.commit('add invoice');
    // With a threshold of 1 the run moves the stored vectors before it writes, then writes the new file's there.
    await index({ vectorGraphMinChunks: 1 });
    expect((await service.prisma.project.findUniqueOrThrow({ where: { id: project.id } })).vectorGraph).toBe(true);
    const stored = await counts();
    expect(stored).toEqual({ chunks: stored.chunks, inGraph: stored.chunks, inline: 0, orphans: 0 });
    const whole = await scopeOf();
    expect(whole.vectorGraph).toBe(true);
    // A graph this small is searched exhaustively: the same exact answers, now through the index.
    for (const question of [...QUESTIONS.filter((question) => !question.startsWith('retry')), 'invoice total of lines'])
      await expectExactTop(whole, question, 5);
    expect(await firstHit('compute vat amount')).toBe(answerBefore);
  });

  it('ranks a snapshot that holds every chunk of the project by the graph alone, with the same answers as checked', async () => {
    const whole = await scopeOf();
    expect(whole).toMatchObject({ vectorGraph: true, coversProject: true });
    const [query] = await embedder.embed(['compute vat amount']);
    const plan = async (scope: ChunkScope) =>
      ((await rankByVector(service.prisma, scope, query, 5, { explain: true })) as unknown as Array<{ 'QUERY PLAN': string }>)
        .map((row) => row['QUERY PLAN'])
        .join('\n');
    // No look at the manifest for a covering snapshot; the check per candidate when not covering, or for a directory.
    expect(await plan(whole)).not.toContain('code_index_files');
    expect(await plan({ ...whole, coversProject: false })).toContain('code_index_files');
    expect(await plan(await scopeOf('src/billing'))).toContain('code_index_files');
    // Still the exact nearest of the snapshot's chunks (ties at equal distance may come in another order).
    for (const question of QUESTIONS.filter((question) => !question.startsWith('retry'))) await expectExactTop(whole, question, 5);
  });

  it('names the graph statement (PostgreSQL keeps its plan, the answers stay), not for a directory, nor past a few limits', async () => {
    let pool: pg.Pool | undefined;
    const one = await openTestDatabase(
      { url: service.running.services.config.databaseUrl! },
      { poolSize: 1, onPool: (made) => (pool = made) },
    );
    try {
      const whole = await scopeOf();
      expect(whole.vectorGraph).toBe(true);
      const [query] = await embedder.embed(['compute vat amount']);
      const first = await rankByVectorWithOccurrences(one.prisma, whole, query, 5);
      expect(first.ranking).toHaveLength(5);
      // PostgreSQL plans a named statement afresh five times, then compares a generic plan with those.
      for (let round = 0; round < 7; round += 1) expect(await rankByVectorWithOccurrences(one.prisma, whole, query, 5)).toEqual(first);
      await rankByVectorWithOccurrences(one.prisma, await scopeOf('src/billing'), query, 5);
      const prepared = await pool!.query<{ statement: string; generic_plans: string }>(
        "SELECT statement, generic_plans FROM pg_prepared_statements WHERE statement LIKE '%hnsw.ef_search%'",
      );
      expect(prepared.rows).toHaveLength(1);
      expect(prepared.rows[0].statement).not.toContain('f.path >=');
      expect(Number(prepared.rows[0].generic_plans)).toBeGreaterThan(0);
      // The limit is in the text and REST's knn sets it: a caller trying every value names only a few texts.
      const total = (await scopeVectors(whole)).length;
      for (let knn = 1; knn <= 12; knn += 1)
        expect((await rankByVectorWithOccurrences(one.prisma, whole, query, knn)).ranking).toHaveLength(Math.min(knn, total));
      const named = await pool!.query<{ count: string }>(
        "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%hnsw.ef_search%'",
      );
      expect(Number(named.rows[0].count)).toBeLessThanOrEqual(8);
    } finally {
      await one.close();
    }
  });
});
