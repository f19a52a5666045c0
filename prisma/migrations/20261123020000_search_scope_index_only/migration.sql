-- Search checks, for every chunk a full-text or vector ranking matches, that the chunk occurs in
-- the snapshot (and directory) searched (inScope in src/db/code-chunks.ts): the chunk's blobs
-- through code_blob_chunks (project_id, chunk_id), then those blobs' files through
-- code_index_files (project_id, blob, variant), filtered on snapshot_id and path. Both indexes
-- now hold every column that check reads, so both probes are index-only scans (no heap page per
-- match once autovacuum has marked the pages all-visible) and the file probe finds the snapshot's
-- row in the index instead of reading every snapshot's row for the blob. The wider indexes serve
-- every lookup the narrower ones served (same leading columns), so those are dropped.
CREATE INDEX "code_blob_chunks_project_id_chunk_id_blob_variant_idx" ON "code_blob_chunks"("project_id", "chunk_id", "blob", "variant");
DROP INDEX "code_blob_chunks_project_id_chunk_id_idx";
CREATE INDEX "code_index_files_project_id_blob_variant_snapshot_id_path_idx" ON "code_index_files"("project_id", "blob", "variant", "snapshot_id", "path");
DROP INDEX "code_index_files_project_id_blob_idx";
