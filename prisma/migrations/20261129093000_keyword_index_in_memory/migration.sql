-- Search ranks keywords with BM25 over an in-memory index of the snapshot, built from each chunk's
-- full-text document (src/search/lexical-index.ts); no statement matches `search_text @@` any more.
-- The GIN index only cost every index run its inserts.
DROP INDEX IF EXISTS "code_chunks_search_text_idx";
