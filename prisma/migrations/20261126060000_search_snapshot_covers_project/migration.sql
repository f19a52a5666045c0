-- Whether a snapshot is known to hold every chunk of its project: then a search of the whole
-- snapshot ranks full-text matches without a scope check per match (src/db/code-chunks.ts,
-- textMatchScope). Set by garbage collection when the project has this one snapshot and nothing
-- else (collectGarbage, under the project's lock); cleared by any batch that stores chunks
-- (storeBatch, under the same lock). Existing snapshots are checked here once, exactly.
ALTER TABLE "code_index_snapshots" ADD COLUMN "covers_project" BOOLEAN NOT NULL DEFAULT false;

UPDATE "code_index_snapshots" s SET "covers_project" = true
  FROM "code_indexes" i
 WHERE i."active_snapshot_id" = s."id" AND s."complete"
   AND (SELECT count(*) FROM "code_index_snapshots" o JOIN "code_indexes" oi ON oi."id" = o."index_id"
         WHERE oi."project_id" = i."project_id") = 1
   AND NOT EXISTS (
     SELECT 1 FROM "code_chunks" c
      WHERE c."project_id" = i."project_id"
        AND NOT EXISTS (
          SELECT 1 FROM "code_blob_chunks" b
            JOIN "code_index_files" f ON f."project_id" = b."project_id" AND f."blob" = b."blob" AND f."variant" = b."variant"
           WHERE b."project_id" = c."project_id" AND b."chunk_id" = c."id" AND f."snapshot_id" = s."id"));
