-- A chunk's full-text document stays in its row (MAIN: compressed if need be, moved out of line only
-- when the row would not fit a page); its content goes to TOAST first instead. The text ranking's
-- levels test `search_text @@ ...` on every row they scan and rank the matches by it, and a document
-- in TOAST costs an index look-up and further pages for each of those rows, where the content is read
-- only for the few chunks a search answers with. At 100k chunks about one document in seven was out
-- of line; in the row, the text ranking's p95 fell by about a sixth and its p99 by a third, with the
-- same rankings (docs/performance.md, "thirteenth round"). Chunks already stored keep their layout;
-- chunks written from now on, and all of them after `VACUUM FULL code_chunks`, get the new one.
ALTER TABLE "code_chunks" ALTER COLUMN "search_text" SET STORAGE MAIN;
