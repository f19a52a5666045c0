-- A blob cut one way (chunker, embedder, language) whose chunks the project stores: what a manifest
-- line points at, and the parent of the blob's chunk rows. With the foreign keys below a manifest line
-- cannot point at a blob whose rows garbage collection deleted, nor a blob's row at a deleted chunk:
-- a run that reuses what another run's collection is deleting gets an error (and reads the blob
-- again), never a file of 0 chunks in a ready index (src/db/code-chunks.ts, collectGarbage).
CREATE TABLE "code_blobs" (
    "project_id" INTEGER NOT NULL,
    "blob" TEXT NOT NULL,
    "variant" TEXT NOT NULL,
    CONSTRAINT "code_blobs_pkey" PRIMARY KEY ("project_id", "blob", "variant"),
    CONSTRAINT "code_blobs_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- A blob some of whose chunks were collected under a run that still used them: its rows go, so the
-- next full run of a ref that holds it chunks it again (its manifest lines stay, as a blob of no rows).
DELETE FROM "code_blob_chunks" b
 WHERE EXISTS (SELECT 1 FROM "code_blob_chunks" m
                WHERE m.project_id = b.project_id AND m.blob = b.blob AND m.variant = b.variant
                  AND NOT EXISTS (SELECT 1 FROM "code_chunks" c WHERE c.project_id = m.project_id AND c.id = m.chunk_id));

INSERT INTO "code_blobs" ("project_id", "blob", "variant")
SELECT DISTINCT "project_id", "blob", "variant" FROM "code_blob_chunks";
INSERT INTO "code_blobs" ("project_id", "blob", "variant")
SELECT DISTINCT "project_id", "blob", "variant" FROM "code_index_files"
ON CONFLICT DO NOTHING;

ALTER TABLE "code_blob_chunks" ADD CONSTRAINT "code_blob_chunks_blob_fkey"
  FOREIGN KEY ("project_id", "blob", "variant") REFERENCES "code_blobs"("project_id", "blob", "variant") ON DELETE CASCADE;
ALTER TABLE "code_blob_chunks" ADD CONSTRAINT "code_blob_chunks_chunk_fkey"
  FOREIGN KEY ("project_id", "chunk_id") REFERENCES "code_chunks"("project_id", "id") DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE "code_index_files" ADD CONSTRAINT "code_index_files_blob_fkey"
  FOREIGN KEY ("project_id", "blob", "variant") REFERENCES "code_blobs"("project_id", "blob", "variant") DEFERRABLE INITIALLY DEFERRED;

-- The two checks above run when a transaction commits: deleting a project cascades to its blobs,
-- chunks and snapshots through several levels of triggers, and a check at the end of each level
-- would see manifest lines that a deeper level is about to delete. A collection that removes a blob
-- or chunk a run still references fails all the same, at its commit.
