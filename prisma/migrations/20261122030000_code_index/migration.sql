-- Codebase indexing (issue 4). A (project, ref) index points at its active snapshot: the manifest of
-- path -> blob of one indexed commit. Search reads only the active snapshot, and a run builds a new
-- one beside it and switches in one transaction, so a crash mid-run never shows half an index.
-- Chunks are content-addressed per project (their id hashes chunker version, embedder version and
-- content), so the same code on another branch, after a rename or in an unchanged file is embedded
-- once. code_blob_chunks says which chunks, at which lines, a blob cut with one chunker and embedder
-- version and language has.

ALTER TABLE "projects" ADD COLUMN "context_exclusions" TEXT[] NOT NULL DEFAULT '{}';

CREATE TYPE "code_index_state" AS ENUM ('pending', 'indexing', 'ready', 'failed');

CREATE TABLE "code_indexes" (
    "id" SERIAL NOT NULL,
    "project_id" INTEGER NOT NULL,
    "ref" TEXT NOT NULL,
    "state" "code_index_state" NOT NULL DEFAULT 'pending',
    "commit_sha" TEXT,
    "active_snapshot_id" BIGINT,
    "files_indexed" INTEGER NOT NULL DEFAULT 0,
    "chunk_count" INTEGER NOT NULL DEFAULT 0,
    "embedded_count" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "code_indexes_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "code_indexes_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "code_indexes_project_id_ref_key" ON "code_indexes"("project_id", "ref");

CREATE TABLE "code_index_snapshots" (
    "id" BIGSERIAL NOT NULL,
    "index_id" INTEGER NOT NULL,
    "commit_sha" TEXT NOT NULL,
    "chunker_version" TEXT NOT NULL,
    "embedder_version" TEXT NOT NULL,
    -- A digest of what else decides which files are in: the project's exclusions and the file filter.
    "settings_digest" TEXT NOT NULL,
    "complete" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "code_index_snapshots_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "code_index_snapshots_index_id_fkey" FOREIGN KEY ("index_id") REFERENCES "code_indexes"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "code_index_snapshots_index_id_idx" ON "code_index_snapshots"("index_id");

ALTER TABLE "code_indexes" ADD CONSTRAINT "code_indexes_active_snapshot_id_fkey" FOREIGN KEY ("active_snapshot_id") REFERENCES "code_index_snapshots"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Paths in the C collation so a directory prefix is a range scan of the primary key.
CREATE TABLE "code_index_files" (
    "snapshot_id" BIGINT NOT NULL,
    "path" TEXT COLLATE "C" NOT NULL,
    "blob" TEXT NOT NULL,
    -- chunker version, embedder version and language: which code_blob_chunks rows this file has.
    "variant" TEXT NOT NULL,
    "project_id" INTEGER NOT NULL,
    CONSTRAINT "code_index_files_pkey" PRIMARY KEY ("snapshot_id", "path"),
    CONSTRAINT "code_index_files_snapshot_id_fkey" FOREIGN KEY ("snapshot_id") REFERENCES "code_index_snapshots"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "code_index_files_project_id_blob_idx" ON "code_index_files"("project_id", "blob", "variant");

CREATE TABLE "code_blob_chunks" (
    "project_id" INTEGER NOT NULL,
    "blob" TEXT NOT NULL,
    "variant" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "chunk_id" TEXT NOT NULL,
    "start_line" INTEGER NOT NULL,
    "end_line" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "symbol" TEXT,
    "language" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "code_blob_chunks_pkey" PRIMARY KEY ("project_id", "blob", "variant", "seq"),
    CONSTRAINT "code_blob_chunks_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "code_blob_chunks_project_id_chunk_id_idx" ON "code_blob_chunks"("project_id", "chunk_id");

CREATE TABLE "code_chunks" (
    "project_id" INTEGER NOT NULL,
    "id" TEXT NOT NULL,
    "embedder_version" TEXT NOT NULL,
    "dims" INTEGER NOT NULL,
    -- Any number of dimensions; each embedder size gets a partial HNSW index on a cast (below, and
    -- created on first use for other sizes), as pgvector documents for mixed dimensions.
    "embedding" vector NOT NULL,
    "content" TEXT NOT NULL,
    -- Identifier-split words of the symbol, path and content for full-text search.
    "search_text" tsvector NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "code_chunks_pkey" PRIMARY KEY ("project_id", "id"),
    CONSTRAINT "code_chunks_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "code_chunks_embedding_512_idx" ON "code_chunks" USING hnsw (("embedding"::vector(512)) vector_cosine_ops) WHERE "dims" = 512;
CREATE INDEX "code_chunks_search_text_idx" ON "code_chunks" USING gin ("search_text");
