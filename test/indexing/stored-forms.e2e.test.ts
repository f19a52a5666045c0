import { PrismaPg } from '@prisma/adapter-pg';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '../../src/db/database';
import { PrismaClient } from '../../src/db/prisma';
import { ChunkPool } from '../../src/indexing/chunk-pool';
import { indexRepository } from '../../src/indexing/index-repository';
import { chunkEmbeddingText, chunkSearchText } from '../../src/indexing/search-text';
import { LexicalEmbedder } from '../../src/llm/embedders/lexical.embedder';
import { createLogger } from '../../src/logger';
import { createGroup, createProject } from '../../src/namespaces/namespaces.service';
import { unique } from '../helpers/fixtures';
import { createGitRepo, SAMPLE_FILES, type GitRepo } from '../helpers/git-repo';
import { createTestDatabase, openTestDatabase, type TestDatabase } from '../helpers/test-database';

// An index run sends each chunk's vector and full-text document in PostgreSQL's binary forms
// (src/db/pg-binary.ts) when it writes through a pool; a client without one sends their text forms.
// Either way, and on the embedded database, the stored chunks must be the ones the text forms gave:
// the lexical embedder's numbers as pgvector reads them printed, and to_tsvector('simple') of the
// chunk's words, byte for byte (same size on disk).
const FILES: Record<string, string> = {
  ...SAMPLE_FILES,
  'src/quoting.ts': [
    `export const quote = "it's a \\"quoted\\" {brace}, [bracket] and a back\\\\slash";`,
    `export function naïveCafé(größe: number): string {`,
    `  return 'ünïcødé ✓ 𝒳 ' + String(größe * 1e5) + ' 1e5x abc_def x_1';`,
    `}`,
    '',
  ].join('\n'),
};

type StoredChunk = {
  id: string;
  dims: number;
  embedder_version: string;
  embedding: string;
  content: string;
  search_text: string;
  search_bytes: number;
  embedding_bytes: number;
};

// A small project's vectors are in code_chunk_vectors (not in the HNSW graph yet), a large one's in code_chunks: one of the two.
const STORED = `SELECT c.id, c.dims, c.embedder_version, COALESCE(c.embedding, v.embedding)::text AS embedding, c.content,
         c.search_text::text AS search_text, pg_column_size(c.search_text) AS search_bytes,
         pg_column_size(COALESCE(c.embedding, v.embedding)) AS embedding_bytes
    FROM code_chunks c LEFT JOIN code_chunk_vectors v ON v.project_id = c.project_id AND v.id = c.id
   WHERE c.project_id = $1 ORDER BY c.id`;

describe('chunks an index run stores', () => {
  const logger = createLogger('silent');
  let database: TestDatabase;
  let service: Database;
  let plain: PrismaClient;
  let embeddedDir: string;
  let embedded: Database | undefined;
  let dataDir: string;
  let repo: GitRepo;
  const chunker = new ChunkPool({ threads: 1 });
  const embedder = new LexicalEmbedder();

  beforeAll(async () => {
    database = await createTestDatabase();
    service = await openTestDatabase(database);
    // A client made elsewhere: no pool is known for it, so it writes through Prisma, as text.
    plain = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url }) });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'duo-stored-'));
    embeddedDir = mkdtempSync(path.join(os.tmpdir(), 'duo-stored-embedded-'));
    repo = createGitRepo(FILES);
  }, 60_000);
  afterAll(async () => {
    await chunker.close();
    await embedded?.close();
    await plain.$disconnect();
    await service.close();
    await database.drop();
    repo.destroy();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(embeddedDir, { recursive: true, force: true });
  });

  async function indexWith(prisma: PrismaClient): Promise<StoredChunk[]> {
    const group = await createGroup(prisma, { path: unique('group'), plan: 'ultimate' });
    const { project } = await createProject(prisma, { fullPath: `${group.fullPath}/${unique('p')}`, repository: repo.path });
    const result = await indexRepository({ prisma, embedder, chunker, logger, dataDir, projectId: project.id, ref: 'main' });
    expect(result).toMatchObject({ outcome: 'indexed', files: Object.keys(FILES).length });
    return prisma.$queryRawUnsafe<StoredChunk[]>(STORED, project.id);
  }

  it('are what the text forms give, through the pool (binary), without one (text) and on the embedded database', async () => {
    const binary = await indexWith(service.prisma);
    expect(binary.length).toBeGreaterThanOrEqual(Object.keys(FILES).length);

    // What the text forms give: pgvector's reading of the printed numbers, PostgreSQL's to_tsvector of the words.
    const blobRows = await service.prisma.$queryRawUnsafe<Array<{ id: string; path: string; symbol: string | null }>>(
      `SELECT DISTINCT ON (b.chunk_id) b.chunk_id AS id, f.path, b.symbol FROM code_blob_chunks b
         JOIN code_index_files f ON f.project_id = b.project_id AND f.blob = b.blob AND f.variant = b.variant
        ORDER BY b.chunk_id, f.path`,
    );
    const byId = new Map(binary.map((chunk) => [chunk.id, chunk]));
    const sources = blobRows.filter((row) => byId.has(row.id)).map((row) => ({ ...row, content: byId.get(row.id)!.content }));
    expect(sources.length).toBe(binary.length);
    const vectors = await embedder.embed(sources.map((source) => chunkEmbeddingText(source)));
    const expected = await service.prisma.$queryRawUnsafe<Array<{ id: string; embedding: string; search_text: string }>>(
      `SELECT s.id, s.v::vector::text AS embedding, to_tsvector('simple', s.t)::text AS search_text
         FROM unnest($1::text[], $2::text[], $3::text[]) AS s(id, v, t) ORDER BY s.id`,
      sources.map((source) => source.id),
      vectors.map((vector) => `[${vector.join(',')}]`),
      sources.map((source) => chunkSearchText(source)),
    );
    expect(binary.map(({ id, embedding, search_text }) => ({ id, embedding, search_text }))).toEqual(expected);
    expect(binary.find((chunk) => chunk.content.includes('naïveCafé'))?.content).toContain(`"it's a \\"quoted\\" {brace}`);

    // The text forms as the indexer sent them before (a client without a pool still does): the same rows, the same sizes on disk.
    expect(await indexWith(plain)).toEqual(binary);

    embedded = await openDatabase({ databaseUrl: undefined, dataDir: embeddedDir, logger, embeddedRole: 'owner' });
    await embedded.migrate();
    expect(await indexWith(embedded.prisma)).toEqual(binary);
  }, 120_000);
});
