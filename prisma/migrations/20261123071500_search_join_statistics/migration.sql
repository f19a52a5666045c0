-- Search's statements join code_blob_chunks to code_index_files on (blob, variant) several times
-- (each text level's scope check, the vector ranking's, the occurrences of the ranked chunks). To
-- estimate such a join PostgreSQL compares the two columns' lists of most common values pairwise:
-- 100 x 100 text comparisons per join, and the lists decompressed each time, on every search.
-- Blob ids of a manifest are nearly unique (one file each, more only for identical files), so
-- their most-common-value list says nothing the number of distinct values does not. With a
-- statistics target of 10 ANALYZE samples 3,000 rows instead of 30,000 and keeps at most 10 such
-- values, only ones that recur in that sample (none on the bench data): the pairwise comparison
-- is skipped or tiny, and the join is estimated from the distinct counts, as before for any blob
-- outside the list. Measured on the 100k-chunk bench data: the same plans and answers, about a
-- third less planning time for the text statement (docs/performance.md, fourth round).
ALTER TABLE "code_index_files" ALTER COLUMN "blob" SET STATISTICS 10;
ANALYZE "code_index_files" ("blob");
