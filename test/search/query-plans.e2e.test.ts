import { PrismaPg } from '@prisma/adapter-pg';
import { snapshotLexicalRows } from '../../src/db/code-chunks';
import { PrismaClient } from '../../src/db/prisma';
import { createGroup, createProject } from '../../src/namespaces/namespaces.service';
import { compareCodePoints, vectorRanking, vectorRankingWithOccurrences } from '../../src/search/search-code';
import { unique } from '../helpers/fixtures';
import { createTestDatabase, openTestDatabase, type TestDatabase } from '../helpers/test-database';

const plan = async (rows: Promise<unknown>) => ((await rows) as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');

// The HNSW index must be able to serve the vector ranking (its operator class matches `<=>`; an
// index built with another one is silently never used). At
// this size the planner may still prefer an exact scan, so sequential scans and sorts are priced out here;
// bench/search.ts prints the plans the planner picks on its own at 10k and 100k chunks.
describe('query plans of the retrieval queries', () => {
  let database: TestDatabase;
  let prisma: PrismaClient;
  let scope: { projectId: number; snapshotId: bigint; directory: string; vectorGraph: boolean };

  beforeAll(async () => {
    database = await createTestDatabase();
    prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url }) });
    const group = await createGroup(prisma, { path: unique('g'), plan: 'ultimate' });
    const projects = await Promise.all(
      ['a', 'b'].map(async (name) => (await createProject(prisma, { fullPath: `${group.fullPath}/${name}` })).project),
    );
    for (const project of projects) {
      const index = await prisma.codeIndex.create({ data: { projectId: project.id, ref: 'main', state: 'ready' } });
      const snapshot = await prisma.codeIndexSnapshot.create({
        data: {
          indexId: index.id,
          commitSha: 'a'.repeat(40),
          chunkerVersion: 'v',
          embedderVersion: 'lexical-v1-512',
          settingsDigest: 'd',
          complete: true,
        },
      });
      await prisma.codeIndex.update({ where: { id: index.id }, data: { activeSnapshotId: snapshot.id } });
      // Chunks of random vectors, one file and one chunk each.
      await prisma.$executeRawUnsafe(
        `WITH rows AS (SELECT n, md5(n::text || $1) AS id FROM generate_series(1, $3::int) AS n)
         INSERT INTO code_chunks (project_id, id, embedder_version, dims, embedding, content, search_text)
         SELECT $2, id, 'lexical-v1-512', 512, (SELECT array_agg(random() - 0.5) FROM generate_series(1, 512) WHERE n > 0)::vector, 'chunk '
         || n, to_tsvector('simple', 'zq' || (n % 97) || ' parse connection' || (n % 13))
           FROM rows`,
        project.fullPath,
        project.id,
        // Most chunks in the searched project, as in a single-team installation: the project filter alone selects little.
        project === projects[0] ? 3000 : 300,
      );
      await prisma.$executeRawUnsafe(
        "INSERT INTO code_blobs (project_id, blob, variant) SELECT $1, id, 'v' FROM code_chunks WHERE project_id = $1",
        project.id,
      );
      await prisma.$executeRawUnsafe(
        `INSERT INTO code_blob_chunks (project_id, blob, variant, seq, chunk_id, start_line, end_line, kind)
         SELECT $1, id, 'v', 0, id, 1, 10, 'function' FROM code_chunks WHERE project_id = $1`,
        project.id,
      );
      await prisma.$executeRawUnsafe(
        `INSERT INTO code_index_files (snapshot_id, path, blob, variant, project_id)
         SELECT $2::bigint, 'src/file-' || id || '.ts', id, 'v', $1 FROM code_chunks WHERE project_id = $1`,
        project.id,
        snapshot.id,
      );
      if (project === projects[0]) scope = { projectId: project.id, snapshotId: snapshot.id, directory: '', vectorGraph: true };
    }
    await prisma.$executeRawUnsafe('ANALYZE');
  }, 120_000);
  afterAll(async () => {
    await prisma.$disconnect();
    await database.drop();
  });

  it('orders by cosine distance through the HNSW index, filtered by project, snapshot and directory inside the query', async () => {
    const vector = Array.from({ length: 512 }, (_, index) => Math.sin(index));
    const whole = await plan(vectorRanking(prisma, scope, vector, 50, { explain: true, preferIndexes: true }));
    expect(whole).toContain('Index Scan using code_chunks_embedding_512_idx');
    const directory = await plan(
      vectorRanking(prisma, { ...scope, directory: 'src/' }, vector, 50, { explain: true, preferIndexes: true }),
    );
    expect(directory).toContain('code_chunks_embedding_512_idx');
    expect(directory).toMatch(/path >= /);
    const hits = await vectorRanking(prisma, scope, vector, 50);
    expect(hits).toHaveLength(50);
  });

  it('sets the HNSW scan settings for the ranking statement alone', async () => {
    const pool = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url, max: 1 }) });
    try {
      const vector = Array.from({ length: 512 }, (_, index) => Math.cos(index));
      expect(await vectorRanking(pool, scope, vector, 50)).toHaveLength(50);
      // One connection: the ranking ran on it, and its session kept the defaults.
      const [settings] = await pool.$queryRawUnsafe<Array<{ scan: string; ef: string }>>(
        "SELECT current_setting('hnsw.iterative_scan') AS scan, current_setting('hnsw.ef_search') AS ef",
      );
      expect(settings).toEqual({ scan: 'off', ef: '40' });
      // 200 wanted: more than the default ef_search of 40 gives, so the statement's settings were in force.
      expect(await vectorRanking(pool, scope, vector, 200)).toHaveLength(200);
    } finally {
      await pool.$disconnect();
    }
  });

  // Search's BM25 index of a snapshot (src/search/lexical-index.ts) is built from these rows: every
  // chunk occurrence of the snapshot's files, in path order, and nothing another snapshot holds.
  it("reads a snapshot's chunk documents for its keyword index: every file's chunks, none of another snapshot", async () => {
    await prisma.$executeRawUnsafe(
      `INSERT INTO code_chunks (project_id, id, embedder_version, dims, embedding, content, search_text)
       SELECT $1, 'elsewhere', 'lexical-v1-512', 512, embedding, 'elsewhere', to_tsvector('simple', 'zq5 zq7 zq11 zq5 zq7 zq11')
         FROM code_chunks WHERE project_id = $1 LIMIT 1`,
      scope.projectId,
    );
    try {
      const rows = await snapshotLexicalRows(prisma, scope);
      expect(rows).toHaveLength(3000);
      expect(rows.map((row) => row.chunkId)).not.toContain('elsewhere');
      expect(rows.map((row) => row.path)).toEqual(rows.map((row) => row.path).sort(compareCodePoints));
      expect(rows[0]).toEqual({
        path: expect.stringMatching(/^src\/file-/),
        blob: rows[0].chunkId,
        role: null,
        chunkId: expect.any(String),
        startLine: 1,
        endLine: 10,
        symbol: null,
        language: null,
        terms: expect.stringMatching(/^'[a-z0-9]+':\d/),
      });
      const direct = await openTestDatabase(database);
      try {
        expect(await snapshotLexicalRows(direct.prisma, scope)).toEqual(rows);
      } finally {
        await direct.close();
      }
    } finally {
      await prisma.$executeRawUnsafe("DELETE FROM code_chunks WHERE project_id = $1 AND id = 'elsewhere'", scope.projectId);
    }
  });
  // searchCode reads where the ranked chunks occur in the rankings' own statements (no round trip
  // after them): the same ranking as the plain statement, and the same rows a separate read of the
  // snapshot's files gives, for the whole repository and for a directory.
  it('reads the occurrences of the ranked chunks with the ranking, as a separate read would', async () => {
    const vector = Array.from({ length: 512 }, (_, index) => Math.sin(index + 1));
    const occurrences = (chunkIds: string[], directory: string) =>
      prisma.$queryRawUnsafe<unknown[]>(
        `SELECT b.chunk_id AS "chunkId", f.path, f.blob, f.role, b.start_line AS "startLine", b.end_line AS "endLine", b.symbol,
                b.language, c.content
           FROM code_blob_chunks b
           JOIN code_index_files f ON f.project_id = b.project_id AND f.blob = b.blob AND f.variant = b.variant
           JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id
          WHERE b.project_id = $1 AND f.snapshot_id = $2::bigint AND b.chunk_id = ANY($3::text[]) AND f.path LIKE $4
          ORDER BY array_position($3::text[], b.chunk_id), f.path, b.start_line`,
        scope.projectId,
        scope.snapshotId,
        chunkIds,
        `${directory}%`,
      );
    for (const directory of ['', 'src/']) {
      const scoped = { ...scope, directory };
      const nearest = await vectorRankingWithOccurrences(prisma, scoped, vector, 50);
      expect(nearest.ranking).toEqual((await vectorRanking(prisma, scoped, vector, 50)).map((hit) => hit.chunkId));
      expect(nearest.ranking).toHaveLength(50);
      expect(nearest.occurrences).toEqual(await occurrences(nearest.ranking, directory));
    }
    expect((await vectorRankingWithOccurrences(prisma, { ...scope, directory: 'elsewhere/' }, vector, 50)).occurrences).toEqual([]);
  });

  it("reads each ranked chunk's occurrences by index probes, never every line of the snapshot, whatever the estimates", async () => {
    const vector = Array.from({ length: 512 }, (_, index) => Math.sin(index + 2));
    // The estimates of an instance of many projects: the project and snapshot filters on the manifest, taken as
    // independent, leave a row or two of a snapshot's thousands (here: without the manifest's statistics, the
    // default selectivities give the same). Planned on them, a join of the snapshot's lines was hashed against
    // the ranking: every line read for 50 chunks.
    await prisma.$executeRawUnsafe(`DELETE FROM pg_statistic WHERE starelid = 'code_index_files'::regclass`);
    try {
      for (const directory of ['', 'src/']) {
        const text = await plan(vectorRankingWithOccurrences(prisma, { ...scope, directory }, vector, 50, { explain: 'analyze' }));
        // The blob rows of a ranked chunk by (project_id, chunk_id), then their lines of the snapshot, once per ranked chunk.
        expect(text).toMatch(/code_blob_chunks_project_id_chunk_id_blob_variant_idx on code_blob_chunks b .*loops=50\b/);
        const linesRead = [...text.matchAll(/on code_index_files f .*?rows=(\d+(?:\.\d+)?) loops=(\d+)/g)].map(
          ([, rowsPerLoop, loops]) => Number(rowsPerLoop) * Number(loops),
        );
        expect(linesRead.length).toBeGreaterThan(0);
        expect(Math.max(...linesRead)).toBeLessThanOrEqual(50);
      }
    } finally {
      await prisma.$executeRawUnsafe('ANALYZE code_index_files');
    }
  });

  // Occurrences of both rankings are put in path order in JavaScript, as PostgreSQL's C collation orders them.
  it('orders strings by code point as the C collation does', async () => {
    const strings = ['a/b.ts', 'a-b.ts', 'a/B.ts', 'é.ts', 'e\u0301.ts', '\uffff.ts', '\u{1f600}.ts', '\ue000.ts', 'a/b', ''];
    const rows = await prisma.$queryRawUnsafe<Array<{ value: string }>>(
      'SELECT value FROM unnest($1::text[]) AS value ORDER BY value COLLATE "C"',
      strings,
    );
    expect([...strings].sort(compareCodePoints)).toEqual(rows.map((row) => row.value));
  });
  // Migration 20261123071500_search_join_statistics: the manifest's blob column keeps a short list of common values, so planning
  // a search's joins on blob does not compare two lists of 100 pairwise. Statistics change plans' estimates, never answers.
  it('keeps few common values of manifest blobs, and ranks the same as with the default statistics', async () => {
    const target = () =>
      prisma.$queryRawUnsafe<Array<{ target: number }>>(
        "SELECT attstattarget AS target FROM pg_attribute WHERE attrelid = 'code_index_files'::regclass AND attname = 'blob'",
      );
    expect(await target()).toEqual([{ target: 10 }]);
    const vector = Array.from({ length: 512 }, (_, index) => Math.sin(index + 2));
    const answers = async () =>
      Promise.all([
        vectorRankingWithOccurrences(prisma, scope, vector, 50),
        vectorRankingWithOccurrences(prisma, { ...scope, directory: 'src/' }, vector, 50),
      ]);
    const withTarget10 = await answers();
    await prisma.$executeRawUnsafe('ALTER TABLE code_index_files ALTER COLUMN blob SET STATISTICS -1');
    await prisma.$executeRawUnsafe('ANALYZE code_index_files (blob)');
    try {
      expect(await answers()).toEqual(withTarget10);
    } finally {
      await prisma.$executeRawUnsafe('ALTER TABLE code_index_files ALTER COLUMN blob SET STATISTICS 10');
      await prisma.$executeRawUnsafe('ANALYZE code_index_files (blob)');
    }
  });
  // The service's client (openDatabase) runs the ranking statements straight on its pool, without
  // Prisma: the same rankings and occurrences as through Prisma (this suite's client has no pool known).
  it('ranks the same straight on the pool as through Prisma', async () => {
    const direct = await openTestDatabase(database);
    try {
      const vector = Array.from({ length: 512 }, (_, index) => Math.cos(index + 1));
      for (const directory of ['', 'src/']) {
        const scoped = { ...scope, directory };
        expect(await vectorRankingWithOccurrences(direct.prisma, scoped, vector, 50)).toEqual(
          await vectorRankingWithOccurrences(prisma, scoped, vector, 50),
        );
        expect(await vectorRanking(direct.prisma, scoped, vector, 50)).toEqual(await vectorRanking(prisma, scoped, vector, 50));
      }
    } finally {
      await direct.close();
    }
  });
});
