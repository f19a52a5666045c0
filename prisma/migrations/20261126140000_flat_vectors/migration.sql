-- A project's vectors join the HNSW graph once the project is large (VECTOR_GRAPH_MIN_CHUNKS in
-- src/db/code-chunks.ts). Until then they are kept inline in a narrow table and searched exactly:
-- an insert into the graph costs about three quarters of the database's work in an index run, and
-- an exact scan of a few thousand inline vectors costs about what the graph does
-- (docs/performance.md, "Eighth round"). Existing projects keep their vectors in the graph.
ALTER TABLE "projects" ADD COLUMN "vector_graph" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "projects" ALTER COLUMN "vector_graph" SET DEFAULT false;

-- NULL while the chunk's vector is in code_chunk_vectors (pgvector's HNSW indexes leave NULLs out).
ALTER TABLE "code_chunks" ALTER COLUMN "embedding" DROP NOT NULL;

CREATE TABLE "code_chunk_vectors" (
    "project_id" INTEGER NOT NULL,
    "id" TEXT NOT NULL,
    "dims" INTEGER NOT NULL,
    "embedding" vector NOT NULL,
    CONSTRAINT "code_chunk_vectors_pkey" PRIMARY KEY ("project_id", "id"),
    CONSTRAINT "code_chunk_vectors_chunk_fkey" FOREIGN KEY ("project_id", "id") REFERENCES "code_chunks"("project_id", "id") ON DELETE CASCADE
);
-- Inline, never in TOAST: an exact scan then reads each vector from the row it is in (3–4 ms for
-- 3,200 vectors against 11 ms out of TOAST).
ALTER TABLE "code_chunk_vectors" ALTER COLUMN "embedding" SET STORAGE PLAIN;
