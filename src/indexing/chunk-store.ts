import { toSql } from 'pgvector';
import type { Prisma, PrismaClient } from '../db/prisma';
import { fileRole } from './file-role';

/**
 * The SQL behind the code index (tables in prisma/migrations/20261122030000_code_index): what Prisma's
 * typed client cannot say (vectors, tsvector, bulk inserts through unnest, copying a manifest).
 * Writes that add chunks, or delete unreferenced ones, take the project's advisory lock so a
 * concurrent run on another branch never loses a chunk it is about to reference.
 */

type Db = PrismaClient | Prisma.TransactionClient;

/** A chunk to store, with its embedding. */
export type NewChunk = { id: string; embedderVersion: string; embedding: number[]; content: string; searchText: string };
/** Where a chunk sits in a blob cut with one variant. */
export type BlobChunkRow = {
  blob: string;
  variant: string;
  seq: number;
  chunkId: string;
  startLine: number;
  endLine: number;
  kind: string;
  symbol: string | null;
  language: string | null;
};
/** One manifest line. */
export type FileRow = { path: string; blob: string; variant: string };

// Prisma's default of 5 s is far too short for a batch of vectors (HNSW inserts) on a busy machine,
// and waiting for another run's lock on the project counts too.
const WRITE_TRANSACTION = { maxWait: 30_000, timeout: 10 * 60_000 } as const;

// Two ints for pg_advisory_xact_lock: a namespace for code-index locks, then the project.
const LOCK_NAMESPACE = 7_741_004;

async function lockProject(db: Prisma.TransactionClient, projectId: number): Promise<void> {
  await db.$executeRawUnsafe('SELECT pg_advisory_xact_lock($1::int, $2::int)', LOCK_NAMESPACE, projectId);
}

/** Which of these `blob|variant` keys already have their chunks stored in the project, with how many. */
export async function knownBlobVariants(
  db: Db,
  projectId: number,
  files: readonly Pick<FileRow, 'blob' | 'variant'>[],
): Promise<Map<string, number>> {
  if (files.length === 0) return new Map();
  const rows = await db.$queryRawUnsafe<Array<{ blob: string; variant: string; chunks: bigint }>>(
    `SELECT b.blob, b.variant, count(*) AS chunks FROM code_blob_chunks b
       JOIN (SELECT DISTINCT * FROM unnest($2::text[], $3::text[])) AS f(blob, variant) ON b.blob = f.blob AND b.variant = f.variant
      WHERE b.project_id = $1
      GROUP BY b.blob, b.variant`,
    projectId,
    files.map((file) => file.blob),
    files.map((file) => file.variant),
  );
  return new Map(rows.map((row) => [`${row.blob}|${row.variant}`, Number(row.chunks)]));
}

/** Which of these chunk ids the project already has embedded. */
export async function knownChunkIds(db: Db, projectId: number, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.$queryRawUnsafe<Array<{ id: string }>>(
    'SELECT id FROM code_chunks WHERE project_id = $1 AND id = ANY($2::text[])',
    projectId,
    [...ids],
  );
  return new Set(rows.map((row) => row.id));
}

/** Stores new chunks, where they sit in their blobs, and manifest lines of a snapshot, in one transaction. */
export async function storeBatch(
  prisma: PrismaClient,
  batch: {
    projectId: number;
    snapshotId: bigint;
    chunks: readonly NewChunk[];
    blobChunks: readonly BlobChunkRow[];
    files: readonly FileRow[];
  },
): Promise<void> {
  const { projectId, snapshotId } = batch;
  await prisma.$transaction(async (tx) => {
    await lockProject(tx, projectId);
    if (batch.chunks.length) {
      await tx.$executeRawUnsafe(
        `INSERT INTO code_chunks (project_id, id, embedder_version, dims, embedding, content, search_text)
         SELECT $1, c.id, c.version, c.dims, c.embedding::vector, c.content, to_tsvector('simple', c.search)
           FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[]) AS c(id, version, dims, embedding, content,
           search)
         ON CONFLICT (project_id, id) DO NOTHING`,
        projectId,
        batch.chunks.map((chunk) => chunk.id),
        batch.chunks.map((chunk) => chunk.embedderVersion),
        batch.chunks.map((chunk) => chunk.embedding.length),
        batch.chunks.map((chunk) => toSql(chunk.embedding) as string),
        batch.chunks.map((chunk) => chunk.content.replace(/\0/g, '')),
        batch.chunks.map((chunk) => chunk.searchText),
      );
    }
    if (batch.blobChunks.length) {
      const rows = batch.blobChunks;
      await tx.$executeRawUnsafe(
        `INSERT INTO code_blob_chunks (project_id, blob, variant, seq, chunk_id, start_line, end_line, kind, symbol, language)
         SELECT $1, r.blob, r.variant, r.seq, r.chunk_id, r.start_line, r.end_line, r.kind, r.symbol, r.language
           FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::int[], $8::text[], $9::text[], $10::text[])
             AS r(blob, variant, seq, chunk_id, start_line, end_line, kind, symbol, language)
         ON CONFLICT DO NOTHING`,
        projectId,
        rows.map((row) => row.blob),
        rows.map((row) => row.variant),
        rows.map((row) => row.seq),
        rows.map((row) => row.chunkId),
        rows.map((row) => row.startLine),
        rows.map((row) => row.endLine),
        rows.map((row) => row.kind),
        rows.map((row) => row.symbol),
        rows.map((row) => row.language),
      );
    }
    await insertFiles(tx, projectId, snapshotId, batch.files);
  }, WRITE_TRANSACTION);
}

async function insertFiles(db: Db, projectId: number, snapshotId: bigint, files: readonly FileRow[]): Promise<void> {
  if (!files.length) return;
  await db.$executeRawUnsafe(
    `INSERT INTO code_index_files (snapshot_id, path, blob, variant, project_id, role)
     SELECT $1::bigint, f.path, f.blob, f.variant, $2, f.role FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) AS f(path, blob,
     variant, role)
     ON CONFLICT (snapshot_id, path) DO UPDATE SET blob = EXCLUDED.blob, variant = EXCLUDED.variant, role = EXCLUDED.role`,
    snapshotId,
    projectId,
    files.map((file) => file.path),
    files.map((file) => file.blob),
    files.map((file) => file.variant),
    files.map((file) => fileRole(file.path)),
  );
}

/** Manifest lines whose chunks are already stored: no transaction or lock needed, nothing new is referenced. */
export async function addFiles(
  prisma: PrismaClient,
  options: { projectId: number; snapshotId: bigint; files: readonly FileRow[] },
): Promise<void> {
  await insertFiles(prisma, options.projectId, options.snapshotId, options.files);
}

/** Copies a snapshot's manifest into another, leaving out some paths (the changed and deleted ones). */
export async function copyFiles(
  prisma: PrismaClient,
  options: { from: bigint; to: bigint; exceptPaths: readonly string[] },
): Promise<number> {
  return prisma.$executeRawUnsafe(
    `INSERT INTO code_index_files (snapshot_id, path, blob, variant, project_id, role)
     SELECT $2::bigint, path, blob, variant, project_id, role FROM code_index_files
      WHERE snapshot_id = $1::bigint AND NOT (path = ANY($3::text[]))`,
    options.from,
    options.to,
    [...options.exceptPaths],
  );
}

/** A snapshot's manifest as path -> blob. */
export async function snapshotFiles(db: Db, snapshotId: bigint): Promise<Map<string, { blob: string; variant: string }>> {
  const rows = await db.$queryRawUnsafe<Array<{ path: string; blob: string; variant: string }>>(
    'SELECT path, blob, variant FROM code_index_files WHERE snapshot_id = $1::bigint',
    snapshotId,
  );
  return new Map(rows.map((row) => [row.path, { blob: row.blob, variant: row.variant }]));
}

export type SnapshotCounts = { files: number; chunks: number; embedded: number };

/** Files and chunk occurrences of a snapshot; embedded counts those whose vector is stored. */
export async function snapshotCounts(db: Db, options: { projectId: number; snapshotId: bigint }): Promise<SnapshotCounts> {
  const [row] = await db.$queryRawUnsafe<Array<{ files: bigint; chunks: bigint; embedded: bigint }>>(
    `SELECT (SELECT count(*) FROM code_index_files WHERE snapshot_id = $2::bigint) AS files,
            count(b.chunk_id) AS chunks,
            count(c.id) AS embedded
       FROM code_index_files f
       JOIN code_blob_chunks b ON b.project_id = $1 AND b.blob = f.blob AND b.variant = f.variant
       LEFT JOIN code_chunks c ON c.project_id = $1 AND c.id = b.chunk_id
      WHERE f.snapshot_id = $2::bigint`,
    options.projectId,
    options.snapshotId,
  );
  return { files: Number(row?.files ?? 0), chunks: Number(row?.chunks ?? 0), embedded: Number(row?.embedded ?? 0) };
}

/**
 * Deletes chunks of the project that no snapshot (active or being built) references any more.
 * Under the project's lock, so a run adding chunks on another branch waits or is waited for.
 */
export async function collectGarbage(prisma: PrismaClient, projectId: number): Promise<{ blobChunks: number; chunks: number }> {
  return prisma.$transaction(async (tx) => {
    await lockProject(tx, projectId);
    const blobChunks = await tx.$executeRawUnsafe(
      `DELETE FROM code_blob_chunks b WHERE b.project_id = $1
          AND NOT EXISTS (SELECT 1 FROM code_index_files f WHERE f.project_id = $1 AND f.blob = b.blob AND f.variant = b.variant)`,
      projectId,
    );
    const chunks = await tx.$executeRawUnsafe(
      `DELETE FROM code_chunks c WHERE c.project_id = $1
          AND NOT EXISTS (SELECT 1 FROM code_blob_chunks b WHERE b.project_id = $1 AND b.chunk_id = c.id)`,
      projectId,
    );
    return { blobChunks, chunks };
  }, WRITE_TRANSACTION);
}

// Sizes whose index this process has made sure of, per database client: CREATE INDEX IF NOT EXISTS
// still takes a lock on the table that blocks other runs' inserts.
const ensuredSizes = new WeakMap<PrismaClient, Set<number>>();

/**
 * The partial HNSW index for vectors of this size (the migration creates the 512 one of the default embedder); checked once per process.
 */
export async function ensureVectorIndex(prisma: PrismaClient, dimensions: number): Promise<void> {
  const ensured = ensuredSizes.get(prisma) ?? new Set<number>();
  ensuredSizes.set(prisma, ensured);
  if (ensured.has(dimensions)) return;
  if (!Number.isInteger(dimensions) || dimensions < 1) throw new Error(`bad vector size ${dimensions}`);
  // pgvector's HNSW indexes `vector` up to 2,000 dimensions; larger vectors are searched exactly.
  if (dimensions > 2_000) return;
  await prisma.$executeRawUnsafe(
    `CREATE INDEX IF NOT EXISTS code_chunks_embedding_${dimensions}_idx ON code_chunks USING hnsw ((embedding::vector(${dimensions})) ` +
      `vector_cosine_ops) WHERE dims = ${dimensions}`,
  );
  ensured.add(dimensions);
}
