-- What each indexed file is for (src/indexing/file-role.ts): implementation, test, types, docs,
-- changelog, example or generated. Written at indexing; manifests written before this column have
-- NULL and search works the role out from the path until the next run rewrites them (the filter
-- version went up, so the next run of every ref reads its whole tree again; chunks are reused).
ALTER TABLE code_index_files ADD COLUMN role text;
