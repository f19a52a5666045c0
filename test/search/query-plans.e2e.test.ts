import { PrismaPg } from '@prisma/adapter-pg';
import { PRERANK_FACTOR } from '../../src/db/code-chunks';
import { PrismaClient } from '../../src/db/prisma';
import { createGroup, createProject } from '../../src/namespaces/namespaces.service';
import {
  compareCodePoints,
  textLevelQueries,
  textRanking,
  textRankingWithOccurrences,
  vectorRanking,
  vectorRankingWithOccurrences,
} from '../../src/search/search-code';
import { queryTerms, toPairsTsQuery, toTsQuery } from '../../src/search/text-query';
import { unique } from '../helpers/fixtures';
import { createTestDatabase, openTestDatabase, type TestDatabase } from '../helpers/test-database';

const plan = async (rows: Promise<unknown>) => ((await rows) as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');

// The HNSW index must be able to serve the vector ranking (its operator class matches `<=>`; an
// index built with another one is silently never used) and the GIN index the full-text ranking. At
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

  it('matches full text through the GIN index', async () => {
    expect(await plan(textRanking(prisma, scope, 'zq96', 50, { explain: true, preferIndexes: true }))).toContain(
      'code_chunks_search_text_idx',
    );
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

  /**
   * textRanking's rule written as one query per level: each level's matches not taken yet, the
   * PRERANK_FACTOR times as many as it still needs by term frequency (ts_rank), those by cover
   * density (ts_rank_cd); `prerank: false` ranks every match by cover density instead.
   */
  async function levelByLevel(projectId: number, question: string, limit: number, prerank = true): Promise<string[]> {
    const terms = queryTerms(question);
    const rankBy = toTsQuery(terms);
    const levels = textLevelQueries(terms).filter((level): level is string => level !== null);
    const expected: string[] = [];
    for (const level of levels) {
      const need = limit - expected.length;
      if (need <= 0) break;
      const rows = await prisma.$queryRawUnsafe<Array<{ id: string }>>(
        `SELECT id FROM (
           SELECT c.id, c.search_text FROM code_chunks c
            WHERE c.project_id = $1 AND c.search_text @@ to_tsquery('simple', $2) AND NOT c.id = ANY($5::text[])
            ORDER BY ${prerank ? "ts_rank(c.search_text, to_tsquery('simple', $3), 1) DESC, " : ''}c.id LIMIT $6
         ) level ORDER BY ts_rank_cd(search_text, to_tsquery('simple', $3), 1) DESC, id LIMIT $4`,
        projectId,
        level,
        rankBy,
        need,
        expected,
        prerank ? PRERANK_FACTOR * need : null,
      );
      expected.push(...rows.map((row) => row.id));
    }
    return expected;
  }

  // The levels in one statement give what one query per level gave, merged in order without repeats.
  it.each([
    ['zq5 zq7 zq11', 50],
    ['zq5 zq7 connection3', 50],
    ['zq5 parse connection3', 10],
    // No chunk holds both zq words: the chunks naming parseConnection3 whole come before those with two words.
    ['zq5 zq7 parseConnection3', 50],
  ])('ranks text level by level as separate queries would: %s', async (question, limit) => {
    const expected = await levelByLevel(scope.projectId, question, limit);
    const ranked = (await textRanking(prisma, scope, question, limit)).map((hit) => hit.chunkId);
    expect(ranked).toEqual(expected);
    expect(ranked.length).toBe(limit);
  });

  it('ranks by cover density only the matches that term frequency puts first, three times as many as a level needs', async () => {
    // Chunks that differ in how often and how close together the two words occur, so that the two
    // rankings disagree: 400 of them, under a level's cap, so every match is a candidate.
    const group = await createGroup(prisma, { path: unique('g'), plan: 'ultimate' });
    const { project } = await createProject(prisma, { fullPath: `${group.fullPath}/prerank` });
    await prisma.$executeRawUnsafe(
      `INSERT INTO code_chunks (project_id, id, embedder_version, dims, embedding, content, search_text)
       SELECT $1, md5(n::text || 'prerank'), 'lexical-v1-512', 8, array_fill(0.5, ARRAY[8])::vector, 'chunk ' || n,
              to_tsvector('simple', repeat('qalpha ', 1 + n % 4) || repeat('filler ', n % 7) || repeat('qbeta ', 1 + n % 3)
                || repeat('other ', n % 11) || 'qalpha')
         FROM generate_series(1, 400) AS n`,
      project.id,
    );
    const question = 'qalpha qbeta';
    const twoStages = await levelByLevel(project.id, question, 10);
    // The data tell the two rules apart, or this test could not fail.
    expect(twoStages).not.toEqual(await levelByLevel(project.id, question, 10, false));
    const ranked = (
      await textRanking(
        prisma,
        { projectId: project.id, snapshotId: 0n, directory: '', coversProject: true, vectorGraph: true },
        question,
        10,
      )
    ).map((hit) => hit.chunkId);
    expect(ranked).toEqual(twoStages);
  });

  it('ranks chunks naming an identifier of the question whole before chunks that share two of its words', async () => {
    // Chunks with zq5 and parse (two words) are many; those with the phrase "parse connection3" come first.
    const ranked = (await textRanking(prisma, scope, 'zq5 zq7 parseConnection3', 50)).map((hit) => hit.chunkId);
    const [{ naming }] = await prisma.$queryRawUnsafe<Array<{ naming: number }>>(
      `SELECT count(*)::int AS naming FROM code_chunks WHERE project_id = $1 AND id = ANY($2::text[])
          AND search_text @@ to_tsquery('simple', 'parse <-> connection3')`,
      scope.projectId,
      ranked,
    );
    expect(ranked).toHaveLength(50);
    expect(naming).toBe(50);
  });

  it('turns synchronized sequential scans off for the text ranking statement alone', async () => {
    const pool = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url, max: 1 }) });
    try {
      const first = await textRanking(pool, scope, 'zq5 parse connection3', 50);
      expect(first).toHaveLength(50);
      expect(await textRanking(pool, scope, 'zq5 parse connection3', 50)).toEqual(first);
      // One connection: the ranking ran on it, and its session kept the default.
      const [setting] = await pool.$queryRawUnsafe<Array<{ value: string }>>("SELECT current_setting('synchronize_seqscans') AS value");
      expect(setting.value).toBe('on');
    } finally {
      await pool.$disconnect();
    }
  });

  // Every text level tests `search_text @@` on each row it scans: a document moved out of line (TOAST)
  // costs an index look-up and more pages per row, the content only for the few chunks an answer shows.
  it('keeps a large full-text document in its row and moves the content out of line instead', async () => {
    const [{ toast }] = await prisma.$queryRawUnsafe<Array<{ toast: string }>>(
      `SELECT reltoastrelid::regclass::text AS toast FROM pg_class WHERE oid = 'code_chunks'::regclass`,
    );
    const toastBytes = async () =>
      Number(
        (await prisma.$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT coalesce(sum(octet_length(chunk_data)), 0) AS n FROM ${toast}`))[0].n,
      );
    const before = await toastBytes();
    // Code that compresses to a few hundred bytes, and a document of 300 distinct words (4.6 KB; a
    // tsvector hardly compresses): over the 2 KB a row holds inline, one of the two had to go.
    await prisma.$executeRawUnsafe(
      `INSERT INTO code_chunks (project_id, id, embedder_version, dims, content, search_text)
       SELECT $1, md5('large document'), 'lexical-v1-512', 512, repeat('return value; ', 2000),
              to_tsvector('simple', string_agg('word' || n, ' ')) FROM generate_series(1, 300) AS n`,
      scope.projectId,
    );
    try {
      const [row] = await prisma.$queryRawUnsafe<Array<{ document: number }>>(
        `SELECT pg_column_size(search_text) AS document FROM code_chunks WHERE project_id = $1 AND id = md5('large document')`,
        scope.projectId,
      );
      expect(row.document).toBeGreaterThan(4000);
      // What went to TOAST is the compressed content (a few hundred bytes), not the document.
      const moved = (await toastBytes()) - before;
      expect(moved).toBeGreaterThan(0);
      expect(moved).toBeLessThan(1000);
    } finally {
      await prisma.$executeRawUnsafe(`DELETE FROM code_chunks WHERE project_id = $1 AND id = md5('large document')`, scope.projectId);
    }
  });

  // The pairs level is written "first & (any later) | second & (any later) | ..." (fewer nodes for the
  // GIN scan); it must match exactly the chunks holding at least two of the words, as the list of
  // every pair did: checked by PostgreSQL itself on every subset of five words, one with synonyms.
  it('matches with the pairs query exactly the text holding two of the words or more', async () => {
    const words = ['parse', 'zq5', 'promise', 'queued', 'socket'];
    const query = toPairsTsQuery(queryTerms(words.join(' ')));
    const subsets = Array.from({ length: 1 << words.length }, (_, mask) => words.filter((_, bit) => mask & (1 << bit)));
    const rows = await prisma.$queryRawUnsafe<Array<{ text: string; matched: boolean }>>(
      `SELECT text, to_tsvector('simple', text) @@ to_tsquery('simple', $1) AS matched FROM unnest($2::text[]) AS text`,
      query,
      subsets.map((subset) => subset.join(' ')),
    );
    expect(rows.map((row) => row.matched)).toEqual(subsets.map((subset) => subset.length >= 2));
    expect(toPairsTsQuery(['alpha'])).toBeNull();
  });

  it('leaves out chunks of the project that the snapshot does not hold, however well they rank', async () => {
    // A chunk only another ref (or an older snapshot) would reference: in the project, in no file of the snapshot.
    await prisma.$executeRawUnsafe(
      `INSERT INTO code_chunks (project_id, id, embedder_version, dims, embedding, content, search_text)
       SELECT $1, 'elsewhere', 'lexical-v1-512', 512, embedding, 'elsewhere', to_tsvector('simple', 'zq5 zq7 zq11 zq5 zq7 zq11')
         FROM code_chunks WHERE project_id = $1 LIMIT 1`,
      scope.projectId,
    );
    try {
      const ranked = (await textRanking(prisma, scope, 'zq5 zq7 zq11', 50)).map((hit) => hit.chunkId);
      expect(ranked).toHaveLength(50);
      expect(ranked).not.toContain('elsewhere');
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
      const text = await textRankingWithOccurrences(prisma, scoped, 'zq5 parse connection3', 50);
      expect(text.ranking).toEqual((await textRanking(prisma, scoped, 'zq5 parse connection3', 50)).map((hit) => hit.chunkId));
      expect(text.ranking).toHaveLength(50);
      expect(text.occurrences).toEqual(await occurrences(text.ranking, directory));
      const nearest = await vectorRankingWithOccurrences(prisma, scoped, vector, 50);
      expect(nearest.ranking).toEqual((await vectorRanking(prisma, scoped, vector, 50)).map((hit) => hit.chunkId));
      expect(nearest.ranking).toHaveLength(50);
      expect(nearest.occurrences).toEqual(await occurrences(nearest.ranking, directory));
    }
    expect((await textRankingWithOccurrences(prisma, { ...scope, directory: 'elsewhere/' }, 'zq5', 50)).occurrences).toEqual([]);
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
        ...['zq5 parse connection3', 'zq5 zq7 zq11', 'parse'].map((question) => textRankingWithOccurrences(prisma, scope, question, 50)),
        vectorRankingWithOccurrences(prisma, scope, vector, 50),
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
        for (const question of ['zq5 parse connection3', 'zq5 zq7 zq11', 'parse']) {
          expect(await textRankingWithOccurrences(direct.prisma, scoped, question, 50)).toEqual(
            await textRankingWithOccurrences(prisma, scoped, question, 50),
          );
          expect(await textRanking(direct.prisma, scoped, question, 50)).toEqual(await textRanking(prisma, scoped, question, 50));
        }
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
