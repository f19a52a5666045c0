-- How many files the current (or last) index run goes through, known once the run has listed them:
-- with files_indexed it says how far a run is ("412 of 577 files"), which a chat question asked
-- before the first index is ready reports while it waits (src/search/await-index.ts).
ALTER TABLE "code_indexes" ADD COLUMN "files_total" INTEGER;
