import { toSql } from 'pgvector';
import { poolRows, withBulkTransaction, type PreparedFamily } from './bulk-sql';
import { binaryArray, int4Array, textArray, TSVECTOR_TYPE, tsvectorTextOfBinary, vectorTextOfBinary } from './pg-binary';
import type { Prisma, PrismaClient } from './prisma';

/**
 * The code chunks' data access: every SQL statement over the code index tables (code_chunks,
 * code_blob_chunks, code_index_files; prisma/migrations/20261122030000_code_index), what Prisma's
 * typed client cannot say (vectors, tsvector, bulk inserts through unnest, copying a manifest).
 * Writes serve indexing (src/indexing); reads serve search and the file view (src/search).
 * Writes that add chunks, point manifest lines at stored blobs, or delete unreferenced ones take the
 * project's advisory lock, so a concurrent run on another branch never loses a chunk it is about to
 * reference; foreign keys (code_blobs, migration 20261129090000_code_blobs) make a manifest line
 * without its blob, or a blob's row without its chunk, an error rather than a file of 0 chunks.
 */

type Db = PrismaClient | Prisma.TransactionClient;

/**
 * A chunk to store, with its embedding: `vector` in pgvector's binary form (vectorBinary), of `dims` numbers,
 * and `searchDocument` its full-text document in tsvector's binary form (tsvectorBinary; src/db/pg-binary.ts).
 */
export type NewChunk = {
  id: string;
  embedderVersion: string;
  dims: number;
  vector: Uint8Array;
  content: string;
  searchDocument: Uint8Array;
};
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
/** A manifest line: a path of the snapshot, its blob and chunk variant, and the file's role (src/indexing/file-role.ts). */
export type FileRow = { path: string; blob: string; variant: string; role: string };

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

/**
 * Chunks a batch's blob rows name that garbage collection deleted after the run looked them up
 * (knownChunkIds) and before its batch took the project's lock: the run embeds and stores them
 * with the batch again (storeBatch wrote nothing).
 */
export class ChunksCollectedError extends Error {
  constructor(readonly ids: readonly string[]) {
    super(`${ids.length} chunks were collected while the batch that uses them was being built`);
    this.name = 'ChunksCollectedError';
  }
}

/**
 * Stores new chunks, where they sit in their blobs (with each blob's code_blobs row), and manifest
 * lines of a snapshot, in one transaction. Chunks the blob rows name that are not in `chunks` must
 * be stored already: checked under the project's lock, ChunksCollectedError when one is not.
 */
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
  const newIds = new Set(batch.chunks.map((chunk) => chunk.id));
  const reused = [...new Set(batch.blobChunks.map((row) => row.chunkId).filter((id) => !newIds.has(id)))].map((id) => ({ id }));
  const blobs = new Map<string, BlobVariant>();
  for (const row of [...batch.blobChunks, ...batch.files])
    blobs.set(`${row.blob}|${row.variant}`, { blob: row.blob, variant: row.variant });
  const writes = (vectorType: number | null): Array<[string, unknown[]]> => {
    const encode = columnEncoder(vectorType);
    const statements: Array<[string, unknown[]]> = [];
    if (batch.chunks.length)
      statements.push([insertChunks(vectorType === null ? 'text' : 'binary'), [projectId, ...encode(batch.chunks, CHUNK_COLUMNS)]]);
    if (blobs.size) statements.push([INSERT_BLOBS, [projectId, ...encode([...blobs.values()], BLOB_COLUMNS)]]);
    if (batch.blobChunks.length) statements.push([INSERT_BLOB_CHUNKS, [projectId, ...encode(batch.blobChunks, BLOB_CHUNK_COLUMNS)]]);
    if (batch.files.length) statements.push([INSERT_FILES, [snapshotId, projectId, ...encode(batch.files, FILE_COLUMNS)]]);
    return statements;
  };
  const missingCheck = (vectorType: number | null): [string, unknown[]] => [
    MISSING_CHUNKS,
    [projectId, ...columnEncoder(vectorType)(reused, ID_COLUMNS)],
  ];
  const missingOf = (rows: Array<{ id: string }>) => {
    if (rows.length) throw new ChunksCollectedError(rows.map((row) => row.id));
  };
  // Straight to PostgreSQL's pool when there is one (bulk-sql.ts says why), with every array in
  // PostgreSQL's binary form (pg-binary.ts); else through Prisma, as text.
  const direct = await withBulkTransaction(prisma, { timeoutMs: WRITE_TRANSACTION.timeout }, async (statement) => {
    const begun = (await statement(BEGIN_BATCH, [LOCK_NAMESPACE, projectId])) as { rows: Array<{ vector_type: number }> };
    const vectorType = begun.rows[0].vector_type;
    if (reused.length) missingOf(((await statement(...missingCheck(vectorType))) as { rows: Array<{ id: string }> }).rows);
    for (const [sql, params] of writes(vectorType)) await statement(sql, params);
  });
  if (direct) return;
  await prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(BEGIN_BATCH, LOCK_NAMESPACE, projectId);
    if (reused.length) {
      const [sql, params] = missingCheck(null);
      missingOf(await tx.$queryRawUnsafe<Array<{ id: string }>>(sql, ...params));
    }
    for (const [sql, params] of writes(null)) await tx.$executeRawUnsafe(sql, ...params);
  }, WRITE_TRANSACTION);
}

// Of a batch's reused chunk ids, those the project no longer has.
const MISSING_CHUNKS = `SELECT r.id FROM unnest($2::text[]) AS r(id)
  WHERE NOT EXISTS (SELECT 1 FROM code_chunks c WHERE c.project_id = $1 AND c.id = r.id)`;

const INSERT_BLOBS = `INSERT INTO code_blobs (project_id, blob, variant)
  SELECT $1, r.blob, r.variant FROM unnest($2::text[], $3::text[]) AS r(blob, variant)
  ON CONFLICT DO NOTHING`;

/** A column of a multi-row INSERT … FROM unnest(…): its element type and how a row gives its value. */
type Column<Row> = readonly ['text' | 'int4' | 'vector' | 'tsvector', (row: Row) => unknown];

const CHUNK_COLUMNS: ReadonlyArray<Column<NewChunk>> = [
  ['text', (chunk) => chunk.id],
  ['text', (chunk) => chunk.embedderVersion],
  ['int4', (chunk) => chunk.dims],
  ['vector', (chunk) => chunk.vector],
  ['text', (chunk) => storableText(chunk.content)],
  ['tsvector', (chunk) => chunk.searchDocument],
];
const BLOB_CHUNK_COLUMNS: ReadonlyArray<Column<BlobChunkRow>> = [
  ['text', (row) => row.blob],
  ['text', (row) => row.variant],
  ['int4', (row) => row.seq],
  ['text', (row) => row.chunkId],
  ['int4', (row) => row.startLine],
  ['int4', (row) => row.endLine],
  ['text', (row) => row.kind],
  ['text', (row) => row.symbol],
  ['text', (row) => row.language],
];
const BLOB_COLUMNS: ReadonlyArray<Column<BlobVariant>> = [
  ['text', (row) => row.blob],
  ['text', (row) => row.variant],
];
const ID_COLUMNS: ReadonlyArray<Column<{ id: string }>> = [['text', (row) => row.id]];
const FILE_COLUMNS: ReadonlyArray<Column<FileRow>> = [
  ['text', (file) => file.path],
  ['text', (file) => file.blob],
  ['text', (file) => file.variant],
  ['text', (file) => file.role],
];

/**
 * The columns' arrays of some rows: in PostgreSQL's binary forms when the `vector` type's oid is
 * known (the pool: its binary arrays name it), else as the arrays Prisma sends (text forms for
 * vectors and full-text documents).
 */
function columnEncoder(vectorType: number | null) {
  return <Row>(rows: readonly Row[], columns: ReadonlyArray<Column<Row>>): unknown[] =>
    columns.map(([type, pick]) => {
      const values = rows.map(pick);
      if (vectorType === null) {
        if (type === 'vector') return (values as Uint8Array[]).map(vectorTextOfBinary);
        if (type === 'tsvector') return (values as Uint8Array[]).map(tsvectorTextOfBinary);
        return values;
      }
      if (type === 'text') return textArray(values as Array<string | null>);
      if (type === 'int4') return int4Array(values as number[]);
      return binaryArray(type === 'vector' ? vectorType : TSVECTOR_TYPE, values as Uint8Array[]);
    });
}

// Not waiting for the disk at commit: a crash can lose only the last moments of an unfinished
// run, whose snapshot is never active (the next run drops it and starts over), and the commit
// that activates a snapshot waits for the disk, which writes everything before it too. The
// `vector` type's oid (an extension's: it differs between databases) is what its binary arrays name.
const BEGIN_BATCH = `SELECT set_config('synchronous_commit', 'off', true), pg_advisory_xact_lock($1::int, $2::int),
  'vector'::regtype::oid::int AS vector_type`;

/**
 * The vectors and full-text documents come as arrays of their binary forms, or as text[] to read (a client without a pool).
 * The same statement clears covers_project on the project's snapshots (see collectGarbage): a new chunk is in none of them yet.
 * It runs after BEGIN_BATCH took the project's lock, so a collectGarbage that sets the flag is over before, or waits; so is a
 * promotion to the graph (promoteToVectorGraph), and the project's mode read here holds for the whole batch: a vector goes into
 * code_chunks.embedding (the HNSW graph) or, while the project is not in the graph, into code_chunk_vectors.
 */
const insertChunks = (form: 'binary' | 'text') => {
  const [vectors, documents] = form === 'binary' ? ['$5::vector[]', '$7::tsvector[]'] : ['$5::text[]::vector[]', '$7::text[]::tsvector[]'];
  return `WITH uncovered AS (
    UPDATE code_index_snapshots SET covers_project = false
     WHERE covers_project AND index_id IN (SELECT id FROM code_indexes WHERE project_id = $1)
  ), mode AS (
    SELECT vector_graph AS graph FROM projects WHERE id = $1
  ), rows AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::int[], ${vectors}, $6::text[], ${documents})
      AS c(id, version, dims, embedding, content, search)
  ), inserted AS (
    INSERT INTO code_chunks (project_id, id, embedder_version, dims, embedding, content, search_text)
    SELECT $1, r.id, r.version, r.dims, CASE WHEN (SELECT graph FROM mode) THEN r.embedding END, r.content, r.search FROM rows r
    ON CONFLICT (project_id, id) DO NOTHING
    RETURNING id
  )
  INSERT INTO code_chunk_vectors (project_id, id, dims, embedding)
  SELECT $1, r.id, r.dims, r.embedding FROM rows r JOIN inserted i ON i.id = r.id
   WHERE NOT (SELECT graph FROM mode)`;
};

const INSERT_BLOB_CHUNKS = `INSERT INTO code_blob_chunks
    (project_id, blob, variant, seq, chunk_id, start_line, end_line, kind, symbol, language)
  SELECT $1, r.blob, r.variant, r.seq, r.chunk_id, r.start_line, r.end_line, r.kind, r.symbol, r.language
    FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::int[], $8::text[], $9::text[], $10::text[])
      AS r(blob, variant, seq, chunk_id, start_line, end_line, kind, symbol, language)
  ON CONFLICT DO NOTHING`;

const INSERT_FILES = `INSERT INTO code_index_files (snapshot_id, path, blob, variant, project_id, role)
  SELECT $1::bigint, f.path, f.blob, f.variant, $2, f.role
    FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) AS f(path, blob, variant, role)
  ON CONFLICT (snapshot_id, path) DO UPDATE SET blob = EXCLUDED.blob, variant = EXCLUDED.variant, role = EXCLUDED.role`;

/** PostgreSQL's text cannot hold NUL. */
const storableText = (text: string) => text.replace(/\0/g, '');

/**
 * Manifest lines of files whose blobs the run found stored (knownBlobVariants): written under the
 * project's lock, and only for blobs still stored then. Another branch's run may have collected one
 * since it was looked up; those files are given back, for the run to read and chunk again (a line
 * pointing at a blob without rows would be refused by code_index_files_blob_fkey anyway).
 */
export async function addFiles(
  prisma: PrismaClient,
  options: { projectId: number; snapshotId: bigint; files: readonly FileRow[] },
): Promise<FileRow[]> {
  if (!options.files.length) return [];
  const added = await prisma.$transaction(async (tx) => {
    await lockProject(tx, options.projectId);
    return tx.$queryRawUnsafe<Array<{ path: string }>>(
      `INSERT INTO code_index_files (snapshot_id, path, blob, variant, project_id, role)
       SELECT $1::bigint, f.path, f.blob, f.variant, $2, f.role
         FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) AS f(path, blob, variant, role)
        WHERE EXISTS (SELECT 1 FROM code_blobs b WHERE b.project_id = $2 AND b.blob = f.blob AND b.variant = f.variant)
       ON CONFLICT (snapshot_id, path) DO UPDATE SET blob = EXCLUDED.blob, variant = EXCLUDED.variant, role = EXCLUDED.role
       RETURNING path`,
      options.snapshotId,
      options.projectId,
      ...columnEncoder(null)(options.files, FILE_COLUMNS),
    );
  }, WRITE_TRANSACTION);
  const written = new Set(added.map((row) => row.path));
  return options.files.filter((file) => !written.has(file.path));
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

/** Bytes a project's chunks take in PostgreSQL (code, vector and full-text columns, as stored). */
export async function storedChunkBytes(prisma: PrismaClient, projectId: number): Promise<number> {
  const [row] = await prisma.$queryRawUnsafe<Array<{ bytes: bigint | null }>>(
    `SELECT ((SELECT sum(pg_column_size(content) + coalesce(pg_column_size(embedding), 0) + pg_column_size(search_text))
                FROM code_chunks WHERE project_id = $1)
             + coalesce((SELECT sum(pg_column_size(embedding)) FROM code_chunk_vectors WHERE project_id = $1), 0))::bigint AS bytes`,
    projectId,
  );
  return Number(row?.bytes ?? 0);
}

export type SnapshotCounts = { files: number; chunks: number; embedded: number };

/**
 * For the rest of the transaction, joins by hash or merge only: for statements over all of a project's rows (its
 * counts, garbage collection's anti-joins), whose plans are made from the tables' statistics. A project new since
 * those were taken is estimated at a row or two, and the planner then nests loops that read the inner side's whole
 * project for each outer row: a new project's first run took 1.3-1.5 s to count and 0.4 and 1.0 s to collect,
 * instead of tens of milliseconds. A hash join costs what the rows cost, whatever the estimate said.
 */
const HASH_JOINS_ONLY = 'SET LOCAL enable_nestloop = off';

/** Files and chunk occurrences of a snapshot; embedded counts those whose vector is stored. */
export async function snapshotCounts(prisma: PrismaClient, options: { projectId: number; snapshotId: bigint }): Promise<SnapshotCounts> {
  const [row] = await prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(HASH_JOINS_ONLY);
    return tx.$queryRawUnsafe<Array<{ files: bigint; chunks: bigint; embedded: bigint }>>(
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
  });
  return { files: Number(row?.files ?? 0), chunks: Number(row?.chunks ?? 0), embedded: Number(row?.embedded ?? 0) };
}

/** A blob cut one way (chunker, embedder, language): what a manifest line points at. */
export type BlobVariant = { blob: string; variant: string };

/** The blob variants a snapshot's manifest lines at these paths point at (each once). */
export async function blobsAtPaths(db: Db, options: { snapshotId: bigint; paths: readonly string[] }): Promise<BlobVariant[]> {
  if (!options.paths.length) return [];
  return db.$queryRawUnsafe<BlobVariant[]>(
    'SELECT DISTINCT blob, variant FROM code_index_files WHERE snapshot_id = $1::bigint AND path = ANY($2::text[])',
    options.snapshotId,
    [...options.paths],
  );
}

/**
 * Deletes blobs and chunks of the project that no snapshot (active or being built) references any
 * more. Under the project's lock, which every write that stores chunks or points a manifest line at
 * a stored blob takes too (storeBatch, addFiles): a run on another branch that looked a blob up
 * before the collection finds it gone when it writes, and reads it again.
 * Then, when the project has one snapshot and it is active, every chunk left occurs in it (every
 * chunk left is referenced by some snapshot's files): it is marked covers_project, which lets a
 * search of the whole snapshot rank vectors without a scope check (exactStatement). Storing chunks clears the mark
 * (insertChunks), under the same lock; deleting chunks or snapshots cannot make it untrue.
 *
 * `only` limits the look to those blob variants and their chunks: what an incremental run's
 * replaced snapshot pointed at for the paths that changed. The whole project is two anti-joins
 * over all its rows (~0.4 s at 100k chunks, for each push); the same checks on the few candidates
 * cost milliseconds. A candidate is deleted only when nothing references it, as in the full pass,
 * so the limited pass deletes a subset of what the full one would.
 */
export async function collectGarbage(
  prisma: PrismaClient,
  projectId: number,
  options: { only?: readonly BlobVariant[] } = {},
): Promise<{ blobChunks: number; chunks: number }> {
  return prisma.$transaction(async (tx) => {
    await lockProject(tx, projectId);
    const { blobChunks, chunks } = options.only ? await collectCandidates(tx, projectId, options.only) : await collectAll(tx, projectId);
    await tx.$executeRawUnsafe(
      `UPDATE code_index_snapshots s SET covers_project = true
         FROM code_indexes i
        WHERE i.project_id = $1 AND i.active_snapshot_id = s.id AND s.complete AND NOT s.covers_project
          AND (SELECT count(*) FROM code_index_snapshots o JOIN code_indexes oi ON oi.id = o.index_id WHERE oi.project_id = $1) = 1`,
      projectId,
    );
    return { blobChunks, chunks };
  }, WRITE_TRANSACTION);
}

async function collectAll(tx: Db, projectId: number): Promise<{ blobChunks: number; chunks: number }> {
  await tx.$executeRawUnsafe(HASH_JOINS_ONLY);
  const blobChunks = await tx.$executeRawUnsafe(
    `DELETE FROM code_blob_chunks b WHERE b.project_id = $1
        AND NOT EXISTS (SELECT 1 FROM code_index_files f WHERE f.project_id = $1 AND f.blob = b.blob AND f.variant = b.variant)`,
    projectId,
  );
  // Their parents: a blob row without chunk rows (a file of no chunks) goes too once no line points at it.
  await tx.$executeRawUnsafe(
    `DELETE FROM code_blobs b WHERE b.project_id = $1
        AND NOT EXISTS (SELECT 1 FROM code_index_files f WHERE f.project_id = $1 AND f.blob = b.blob AND f.variant = b.variant)`,
    projectId,
  );
  const chunks = await tx.$executeRawUnsafe(
    `DELETE FROM code_chunks c WHERE c.project_id = $1
        AND NOT EXISTS (SELECT 1 FROM code_blob_chunks b WHERE b.project_id = $1 AND b.chunk_id = c.id)`,
    projectId,
  );
  // Back to the session's setting for the rest of the transaction (the covers_project mark).
  await tx.$executeRawUnsafe('RESET enable_nestloop');
  return { blobChunks, chunks };
}

async function collectCandidates(
  tx: Db,
  projectId: number,
  candidates: readonly BlobVariant[],
): Promise<{ blobChunks: number; chunks: number }> {
  if (!candidates.length) return { blobChunks: 0, chunks: 0 };
  // Two statements: the second must see the first's deletions (a data-modifying CTE would not).
  const gone = await tx.$queryRawUnsafe<Array<{ chunkId: string }>>(
    `DELETE FROM code_blob_chunks b
      WHERE b.project_id = $1 AND (b.blob, b.variant) IN (SELECT * FROM unnest($2::text[], $3::text[]))
        AND NOT EXISTS (SELECT 1 FROM code_index_files f WHERE f.project_id = $1 AND f.blob = b.blob AND f.variant = b.variant)
     RETURNING b.chunk_id AS "chunkId"`,
    projectId,
    candidates.map((candidate) => candidate.blob),
    candidates.map((candidate) => candidate.variant),
  );
  await tx.$executeRawUnsafe(
    `DELETE FROM code_blobs b
      WHERE b.project_id = $1 AND (b.blob, b.variant) IN (SELECT * FROM unnest($2::text[], $3::text[]))
        AND NOT EXISTS (SELECT 1 FROM code_index_files f WHERE f.project_id = $1 AND f.blob = b.blob AND f.variant = b.variant)`,
    projectId,
    candidates.map((candidate) => candidate.blob),
    candidates.map((candidate) => candidate.variant),
  );
  const chunks = gone.length
    ? await tx.$executeRawUnsafe(
        `DELETE FROM code_chunks c WHERE c.project_id = $1 AND c.id = ANY($2::text[])
            AND NOT EXISTS (SELECT 1 FROM code_blob_chunks b WHERE b.project_id = $1 AND b.chunk_id = c.id)`,
        projectId,
        [...new Set(gone.map((row) => row.chunkId))],
      )
    : 0;
  return { blobChunks: gone.length, chunks };
}

/**
 * A project's vectors join the HNSW graph once it holds this many chunks: an index run promotes it
 * (promoteToVectorGraph). Below that they stay inline in code_chunk_vectors and search reads them
 * all. Measured on rxjs's 3,200 vectors: an exact scan of them inline takes 3–4 ms, about what the
 * graph takes, while an insert into the graph is three quarters of the database's work in an index
 * run (docs/performance.md, "Small projects stay out of the vector graph").
 */
export const VECTOR_GRAPH_MIN_CHUNKS = 5_000;

/** Whether the project's vectors are in the HNSW graph, and how many chunks it holds (counted only when they are not). */
export async function vectorGraphState(db: Db, projectId: number): Promise<{ graph: boolean; chunks: number }> {
  const [row] = await db.$queryRawUnsafe<Array<{ graph: boolean; chunks: bigint | null }>>(
    `SELECT p.vector_graph AS graph,
            CASE WHEN NOT p.vector_graph THEN (SELECT count(*) FROM code_chunks c WHERE c.project_id = p.id) END AS chunks
       FROM projects p WHERE p.id = $1`,
    projectId,
  );
  return { graph: row?.graph ?? true, chunks: Number(row?.chunks ?? 0) };
}

/**
 * Moves a project's vectors into the HNSW graph, and marks it so that later batches write theirs
 * there (insertChunks reads the mark under the same lock). One transaction: the vectors are in one
 * place or the other, never both or neither. A search that read the old mark just before the commit
 * finds no vectors that once (its full-text ranking still answers). False when the project was in
 * the graph already.
 */
export async function promoteToVectorGraph(prisma: PrismaClient, projectId: number): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    await lockProject(tx, projectId);
    const [row] = await tx.$queryRawUnsafe<Array<{ graph: boolean }>>(
      'SELECT vector_graph AS graph FROM projects WHERE id = $1',
      projectId,
    );
    if (!row || row.graph) return false;
    await tx.$executeRawUnsafe(
      `UPDATE code_chunks c SET embedding = v.embedding FROM code_chunk_vectors v
        WHERE c.project_id = $1 AND v.project_id = $1 AND v.id = c.id`,
      projectId,
    );
    await tx.$executeRawUnsafe('DELETE FROM code_chunk_vectors WHERE project_id = $1', projectId);
    await tx.$executeRawUnsafe('UPDATE projects SET vector_graph = true WHERE id = $1', projectId);
    return true;
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

// --- Reads: search and the files of a snapshot ---------------------------------------------------

/** The part of a ref's index a search looks at: a snapshot, optionally one directory of it. */
export type ChunkScope = {
  projectId: number;
  snapshotId: bigint;
  /** Normalised to end with `/`, or '' for the whole repository. */
  directory: string;
  /**
   * The snapshot was found to hold every chunk of the project (code_index_snapshots.covers_project,
   * as read with it): a search of the whole snapshot then ranks the project's vectors without a
   * scope check per chunk (exactStatement). Default false.
   */
  coversProject?: boolean;
  /**
   * The project's vectors are in the HNSW graph (projects.vector_graph, read with the snapshot); false: they are in
   * code_chunk_vectors and searched exactly (see VECTOR_GRAPH_MIN_CHUNKS).
   */
  vectorGraph: boolean;
};

/** SQL for "f.path is in the scope's directory", as a range on the C-collated primary key. */
export function directoryCondition(directory: string, firstParameter: number): { sql: string; parameters: string[] } {
  if (!directory) return { sql: 'TRUE', parameters: [] };
  // Every path under `dir/` sorts between `dir/` and `dir0` ('0' follows '/').
  const upper = `${directory.slice(0, -1)}0`;
  return { sql: `f.path >= $${firstParameter} AND f.path < $${firstParameter + 1}`, parameters: [directory, upper] };
}

/** A chunk in a ranking. */
export type Ranked = { chunkId: string };

/**
 * For EXPLAIN in tests and benchmarks: show the plan, optionally with sequential scans and sorts
 * priced out, which shows whether an index can serve the query at all (a small table is cheaper
 * to scan and sort, so the planner would not show it).
 */
export type PlanOptions = { explain?: boolean | 'analyze'; preferIndexes?: boolean };

/** The EXPLAIN prefix PlanOptions asks for: 'analyze' runs the query and counts buffers. */
const explainPrefix = (options: PlanOptions) =>
  options.explain === 'analyze' ? 'EXPLAIN (ANALYZE, BUFFERS) ' : options.explain ? 'EXPLAIN ' : '';

async function applyPlanOptions(tx: { $executeRawUnsafe(query: string): Promise<number> }, options: PlanOptions): Promise<void> {
  if (!options.preferIndexes) return;
  await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
  await tx.$executeRawUnsafe('SET LOCAL enable_sort = off');
}

// Chunks of the snapshot (and directory) in which a chunk occurs: the filter runs inside the query.
function inScope(scope: ChunkScope, firstParameter: number) {
  const directory = directoryCondition(scope.directory, firstParameter);
  return {
    sql: `EXISTS (SELECT 1 FROM code_blob_chunks b JOIN code_index_files f ON f.project_id = b.project_id AND f.blob = b.blob AND f.variant
    = b.variant
                   WHERE b.project_id = c.project_id AND b.chunk_id = c.id AND f.snapshot_id = $2::bigint AND ${directory.sql})`,
    parameters: directory.parameters,
  };
}

/** Where a ranked chunk occurs in the searched snapshot's files (a chunk can occur in several), with its content. */
export type ChunkOccurrence = {
  chunkId: string;
  path: string;
  blob: string;
  role: string | null;
  startLine: number;
  endLine: number;
  symbol: string | null;
  language: string | null;
  content: string;
};

/** A ranking (chunk ids, best first) with where each of its chunks occurs in the scope. */
export type RankedOccurrences = { ranking: string[]; occurrences: ChunkOccurrence[] };

/**
 * The occurrences of ranked chunks, read by the ranking's own statement: `ranked` is a query of
 * (id, position) and `directory` the scope's directory condition on f with the statement's
 * parameter numbers ($1 project, $2 snapshot). Rows come by position, then path and line.
 */
function occurrencesOfRanked(ranked: string, directory: string): string {
  // Per ranked chunk its blob rows by (project_id, chunk_id), then per blob row its lines of the snapshot:
  // index probes, a few dozen in all, in that order whatever the estimates (each step a LATERAL subquery
  // that OFFSET 0 keeps from being pulled up into a join the planner may order or hash as it likes). The
  // planner estimates a snapshot's lines of a project at a row or two on an instance of many projects
  // (the two filters taken as independent) and then hashed every line of the snapshot against the
  // ranking, or probed every line for each ranked chunk: 180 ms of a 400 ms search at 25,000 chunks on
  // the embedded database. The content is a subquery: each row's by the primary key. A ranked chunk
  // always has its row (the ranking read it in this statement's snapshot); a NULL would mean none, and
  // toRankedOccurrences drops it.
  return `ranked_chunks AS MATERIALIZED (${ranked})
     SELECT r.position, b.chunk_id AS "chunkId", f.path, f.blob, f.role, b.start_line AS "startLine", b.end_line AS "endLine",
            b.symbol, b.language,
            (SELECT c.content FROM code_chunks c WHERE c.project_id = $1 AND c.id = b.chunk_id) AS content
       FROM ranked_chunks r
       CROSS JOIN LATERAL (
         SELECT b.chunk_id, b.blob, b.variant, b.start_line, b.end_line, b.symbol, b.language FROM code_blob_chunks b
          WHERE b.project_id = $1 AND b.chunk_id = r.id OFFSET 0
       ) b
       CROSS JOIN LATERAL (
         SELECT f.path, f.blob, f.role FROM code_index_files f
          WHERE f.project_id = $1 AND f.blob = b.blob AND f.variant = b.variant AND f.snapshot_id = $2::bigint AND ${directory} OFFSET 0
       ) f
      ORDER BY r.position, f.path, b.start_line`;
}

/** The ranking and occurrences of rows from occurrencesOfRanked (every ranked chunk has one: its scope check is the same). */
function toRankedOccurrences(
  rows: Array<Omit<ChunkOccurrence, 'content'> & { content: string | null; position: bigint | number | string }>,
): RankedOccurrences {
  const ranking: string[] = [];
  const occurrences: ChunkOccurrence[] = [];
  for (const { position: _position, content, ...row } of rows) {
    if (content === null) continue;
    if (ranking[ranking.length - 1] !== row.chunkId) ranking.push(row.chunkId);
    occurrences.push({ ...row, content });
  }
  return { ranking, occurrences };
}

/**
 * Nearest chunks by cosine distance through the HNSW index of the vector size, with pgvector's
 * iterative scan so the project, snapshot and directory filter never leaves the list short.
 *
 * The scan's settings are set for this statement alone, by set_config(..., is_local) in a CTE that a
 * one-time filter reads before the index scan returns its first row (pgvector reads them then, not
 * when the plan is made): one round trip instead of a transaction's five (BEGIN, two SET LOCAL, the
 * query, COMMIT). Outside a transaction, "local" ends with the statement; the same holds in EXPLAIN.
 */
export async function rankByVector(
  prisma: PrismaClient,
  scope: ChunkScope,
  vector: number[],
  limit: number,
  options: PlanOptions = {},
): Promise<Ranked[]> {
  return runRanking<Ranked[]>(prisma, vectorStatement(scope, vector, limit, false), options);
}

/** rankByVector with where each ranked chunk occurs (occurrencesOfRanked), in the same statement. */
export async function rankByVectorWithOccurrences(
  prisma: PrismaClient,
  scope: ChunkScope,
  vector: number[],
  limit: number,
  options: PlanOptions = {},
): Promise<RankedOccurrences> {
  const rows = await runRanking<Array<ChunkOccurrence & { position: bigint }>>(
    prisma,
    vectorStatement(scope, vector, limit, true),
    options,
  );
  return options.explain ? (rows as never) : toRankedOccurrences(rows);
}

function vectorStatement(scope: ChunkScope, vector: number[], limit: number, occurrences: boolean): Statement {
  return scope.vectorGraph ? graphStatement(scope, vector, limit, occurrences) : exactStatement(scope, vector, limit, occurrences);
}

/**
 * The outer part of a vector statement over `nearest` ("chunkId", distance): the ids best first, or
 * with their occurrences ($1 project, $2 snapshot, the directory's parameters from directoryParameter).
 */
function nearestRanked(
  scope: ChunkScope,
  options: { occurrences: boolean; directoryParameter: number; order: string; where?: string },
): string {
  const where = options.where ? ` WHERE ${options.where}` : '';
  return options.occurrences
    ? `, ${occurrencesOfRanked(
        `SELECT "chunkId" AS id, row_number() OVER (ORDER BY ${options.order}) AS position FROM nearest${where}`,
        directoryCondition(scope.directory, options.directoryParameter).sql,
      )}`
    : ` SELECT "chunkId" FROM nearest${where} ORDER BY ${options.order}`;
}

/**
 * The graph's statement. Its plan does not depend on the question (the HNSW index scan, the scope
 * checks and the occurrences by index), so without a directory it is a named statement: PostgreSQL
 * then keeps a generic plan after its first custom ones, which saves planning it for every search
 * (1.5–2 ms of the database's CPU at 100k chunks; the same plan, checked with EXPLAIN EXECUTE). The
 * limit is written into the text: a generic plan for `LIMIT $n` costs an unknown limit and joined
 * whole tables. A directory's range is left to custom plans, which see how much of the tree it holds.
 */
function graphStatement(scope: ChunkScope, vector: number[], limit: number, occurrences: boolean): Statement {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`vector ranking limit must be a positive integer, got ${limit}`);
  const dims = vector.length;
  // A whole snapshot that holds every chunk of the project (covers_project) needs no check per candidate, as in
  // exactStatement. The check is also what made the planner leave the graph: a project's lines of a snapshot,
  // estimated at a row or two (a manifest too small to be analyzed, or many projects), turned the EXISTS into a
  // join that read all 25,000 of a project's vectors by key and sorted them (950 ms a search on the embedded
  // database, against a scan of the graph).
  const filter = scope.coversProject && !scope.directory ? { sql: '$2::bigint IS NOT NULL', parameters: [] } : inScope(scope, 5);
  const efSearch = Math.max(40, Math.min(1000, limit * 2));
  // relaxed_order may return neighbours slightly out of order: the outer query sorts them exactly.
  return {
    sql: `WITH settings AS MATERIALIZED (
         SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true) AS scan, set_config('hnsw.ef_search', $4, true) AS ef_search
       ), nearest AS MATERIALIZED (
         SELECT c.id AS "chunkId", c.embedding::vector(${dims}) <=> $3::vector(${dims}) AS distance
           FROM code_chunks c
          WHERE (SELECT count(*) FROM settings) = 1 AND c.project_id = $1 AND c.dims = ${dims} AND ${filter.sql}
          ORDER BY c.embedding::vector(${dims}) <=> $3::vector(${dims})
          LIMIT ${limit}
       )${nearestRanked(scope, { occurrences, directoryParameter: 5, order: 'distance' })}`,
    parameters: [scope.projectId, scope.snapshotId, toSql(vector), String(efSearch), ...filter.parameters],
    // The REST semantic search takes the limit from its caller (`knn`, 1–100): a family of at most 8 named texts.
    prepare: scope.directory ? false : GRAPH_STATEMENT_FAMILY,
  };
}

const GRAPH_STATEMENT_FAMILY: PreparedFamily = { family: 'vector-graph', most: 8 };

/**
 * A project not in the graph: every vector of the scope, read inline from code_chunk_vectors, by
 * exact distance, ties by id. A whole snapshot that holds every chunk of the project needs no check
 * (covers_project); otherwise the scope's chunks come from its files first (a hash semi-join:
 * for a directory, a few files).
 *
 * The vector size is compared inside the distance (another size, another embedder's chunk, gets
 * none and is dropped after the limit), not in WHERE: the planner estimates a filter on it from the
 * table's statistics, and before the first ANALYZE of a fresh code_chunk_vectors it took 3 of 1,053
 * rows to pass, then read the occurrences in the wrong order (90 ms a search instead of 4).
 */
function exactStatement(scope: ChunkScope, vector: number[], limit: number, occurrences: boolean): Statement {
  const dims = vector.length;
  const directory = directoryCondition(scope.directory, 5);
  const inSnapshot =
    scope.coversProject && !scope.directory
      ? '$2::bigint IS NOT NULL'
      : `c.id IN (SELECT b.chunk_id FROM code_index_files f
                   JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant
                  WHERE f.project_id = $1 AND f.snapshot_id = $2::bigint AND ${directory.sql})`;
  return {
    sql: `WITH nearest AS MATERIALIZED (
         SELECT c.id AS "chunkId", CASE WHEN c.dims = ${dims} THEN c.embedding <=> $3::vector END AS distance
           FROM code_chunk_vectors c
          WHERE c.project_id = $1 AND ${inSnapshot}
          ORDER BY 2, 1
          LIMIT $4
       )${nearestRanked(scope, { occurrences, directoryParameter: 5, order: 'distance, "chunkId"', where: 'distance IS NOT NULL' })}`,
    parameters: [scope.projectId, scope.snapshotId, toSql(vector), limit, ...directory.parameters],
  };
}

/** `prepare`: sent as a named statement (poolRows), for a text whose generic plan is as good as a custom one. */
type Statement = { sql: string; parameters: unknown[]; prepare?: boolean | PreparedFamily };

/**
 * Runs a ranking statement: straight on the client's pool when it has one (bulk-sql.ts), else
 * through Prisma; EXPLAIN through Prisma, and with preferIndexes in a transaction that prices
 * sequential scans and sorts out.
 */
async function runRanking<T>(prisma: PrismaClient, statement: Statement, options: PlanOptions): Promise<T> {
  const run = (db: Pick<PrismaClient, '$queryRawUnsafe'>) =>
    db.$queryRawUnsafe<T>(`${explainPrefix(options)}${statement.sql}`, ...statement.parameters);
  if (options.preferIndexes)
    return prisma.$transaction(async (tx) => {
      await applyPlanOptions(tx, options);
      return run(tx);
    });
  const rows = options.explain ? undefined : await poolRows(prisma, statement.sql, statement.parameters, { prepare: statement.prepare });
  return rows ? (rows as T) : run(prisma);
}

/** Characters of code in a directory of a snapshot (each distinct chunk of each file counted once). */
export async function directorySize(prisma: PrismaClient, scope: ChunkScope): Promise<{ files: number; chars: number }> {
  const directory = directoryCondition(scope.directory, 3);
  const [row] = await prisma.$queryRawUnsafe<Array<{ files: bigint; chars: bigint | null }>>(
    `SELECT count(DISTINCT f.path) AS files, sum(length(c.content)) AS chars
       FROM code_index_files f
       JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant
       JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id
      WHERE f.project_id = $1 AND f.snapshot_id = $2::bigint AND ${directory.sql}`,
    scope.projectId,
    scope.snapshotId,
    ...directory.parameters,
  );
  return { files: Number(row?.files ?? 0), chars: Number(row?.chars ?? 0) };
}

/** One chunk of one file of a snapshot, in file and chunk order; a file without chunks has one row of nulls. */
export type FileChunkRow = { path: string; blob: string; language: string | null; startLine: number | null; content: string | null };

/** The chunks of every file in a directory of a snapshot (the whole snapshot for ''). */
export function directoryChunkRows(prisma: PrismaClient, scope: ChunkScope): Promise<FileChunkRow[]> {
  const directory = directoryCondition(scope.directory, 3);
  return prisma.$queryRawUnsafe<FileChunkRow[]>(
    `SELECT f.path, f.blob, b.language, b.start_line AS "startLine", c.content
       FROM code_index_files f
       JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant
       JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id
      WHERE f.project_id = $1 AND f.snapshot_id = $2::bigint AND ${directory.sql}
      ORDER BY f.path, b.seq`,
    scope.projectId,
    scope.snapshotId,
    ...directory.parameters,
  );
}

/** The chunks of one file of a snapshot; no rows when the snapshot has no such file. */
export function fileChunkRows(
  prisma: PrismaClient,
  options: { projectId: number; snapshotId: bigint; path: string },
): Promise<FileChunkRow[]> {
  return prisma.$queryRawUnsafe<FileChunkRow[]>(
    `SELECT f.path, f.blob, b.language, b.start_line AS "startLine", c.content
       FROM code_index_files f
       LEFT JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant
       LEFT JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id
      WHERE f.project_id = $1 AND f.snapshot_id = $2::bigint AND f.path = $3
      ORDER BY b.seq`,
    options.projectId,
    options.snapshotId,
    options.path,
  );
}

/** The distinct parent directories of a snapshot's files (without their ancestors). */
export async function parentDirectories(prisma: PrismaClient, options: { projectId: number; snapshotId: bigint }): Promise<string[]> {
  const rows = await prisma.$queryRawUnsafe<Array<{ directory: string }>>(
    `SELECT DISTINCT regexp_replace(f.path, '/[^/]*$', '') AS directory
       FROM code_index_files f
      WHERE f.project_id = $1 AND f.snapshot_id = $2::bigint AND position('/' in f.path) > 0`,
    options.projectId,
    options.snapshotId,
  );
  return rows.map((row) => row.directory);
}

/** One chunk occurrence of the snapshot as the database returns it, in path then line order. */
export type LexicalRow = {
  path: string;
  blob: string;
  role: string | null;
  chunkId: string;
  startLine: number;
  endLine: number;
  symbol: string | null;
  language: string | null;
  /** The chunk's tsvector in PostgreSQL's text form (`'parse':1,4 'connection':2`). */
  terms: string;
};

/**
 * Every chunk occurrence of a snapshot with its full-text document as text, in path and chunk
 * order: what search's in-memory BM25 index (src/search/lexical-index.ts) is built from. One
 * statement, so the rows are of one database snapshot.
 */
export async function snapshotLexicalRows(prisma: PrismaClient, options: { projectId: number; snapshotId: bigint }): Promise<LexicalRow[]> {
  const text = `SELECT f.path, f.blob, f.role, b.chunk_id AS "chunkId", b.start_line AS "startLine", b.end_line AS "endLine",
          b.symbol, b.language, c.search_text::text AS terms
     FROM code_index_files f
     JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant
     JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id
    WHERE f.project_id = $1 AND f.snapshot_id = $2::bigint
    ORDER BY f.path, b.seq`;
  const parameters = [options.projectId, options.snapshotId];
  return (await poolRows<LexicalRow>(prisma, text, parameters)) ?? prisma.$queryRawUnsafe<LexicalRow[]>(text, ...parameters);
}

/** The content of chunks by id (those of them the project has). */
export async function chunkContents(
  prisma: PrismaClient,
  options: { projectId: number; ids: readonly string[] },
): Promise<Map<string, string>> {
  if (!options.ids.length) return new Map();
  const text = `SELECT id, content FROM code_chunks WHERE project_id = $1 AND id = ANY($2::text[])`;
  const parameters = [options.projectId, [...options.ids]];
  const rows =
    (await poolRows<{ id: string; content: string }>(prisma, text, parameters)) ??
    (await prisma.$queryRawUnsafe<Array<{ id: string; content: string }>>(text, ...parameters));
  return new Map(rows.map((row) => [row.id, row.content]));
}

/** A snapshot's serialised keyword index (code_snapshot_keyword_indexes) when one of this format is stored. */
export async function storedKeywordIndex(
  prisma: PrismaClient,
  options: { snapshotId: bigint; format: number },
): Promise<Uint8Array | null> {
  const text = 'SELECT data FROM code_snapshot_keyword_indexes WHERE snapshot_id = $1::bigint AND format = $2';
  const parameters = [options.snapshotId.toString(), options.format];
  const rows =
    (await poolRows<{ data: Uint8Array }>(prisma, text, parameters)) ??
    (await prisma.$queryRawUnsafe<Array<{ data: Uint8Array }>>(text, ...parameters));
  return rows[0]?.data ?? null;
}

/**
 * Keeps a snapshot's serialised keyword index, replacing one of another format. Nothing when the
 * snapshot is gone (a run replaced it meanwhile): the statement inserts only beside an existing one.
 */
export async function storeKeywordIndex(
  prisma: PrismaClient,
  options: { snapshotId: bigint; format: number; data: Uint8Array },
): Promise<void> {
  const text = `INSERT INTO code_snapshot_keyword_indexes (snapshot_id, format, data)
     SELECT s.id, $2, $3 FROM code_index_snapshots s WHERE s.id = $1::bigint
     ON CONFLICT (snapshot_id) DO UPDATE SET format = EXCLUDED.format, data = EXCLUDED.data, created_at = now()
      WHERE code_snapshot_keyword_indexes.format <> EXCLUDED.format`;
  const parameters = [
    options.snapshotId.toString(),
    options.format,
    Buffer.from(options.data.buffer, options.data.byteOffset, options.data.byteLength),
  ];
  if (!(await poolRows(prisma, text, parameters))) await prisma.$executeRawUnsafe(text, ...parameters);
}
