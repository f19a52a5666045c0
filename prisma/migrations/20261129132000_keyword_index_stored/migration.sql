-- A snapshot's in-memory keyword index (src/search/lexical-index.ts) in its serialised form, kept
-- beside the snapshot: a process that does not hold it (another replica, after a restart, after its
-- LRU let it go) loads it in milliseconds instead of building it from every chunk's document again
-- (tens of milliseconds at 1,000 chunks, seconds at 25,000). Written by the first process that built
-- it; `format` names the serialisation and the index's make-up, and a row of another format is
-- built and written again. Goes with its snapshot.
CREATE TABLE "code_snapshot_keyword_indexes" (
    "snapshot_id" BIGINT NOT NULL,
    "format" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "code_snapshot_keyword_indexes_pkey" PRIMARY KEY ("snapshot_id"),
    CONSTRAINT "code_snapshot_keyword_indexes_snapshot_id_fkey" FOREIGN KEY ("snapshot_id") REFERENCES "code_index_snapshots"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- Compressed already (deflate): PostgreSQL's own compression would only cost time.
ALTER TABLE "code_snapshot_keyword_indexes" ALTER COLUMN "data" SET STORAGE EXTERNAL;
