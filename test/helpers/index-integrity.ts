import type { PrismaClient } from '../../src/db/prisma';

/**
 * The files of a project's ready snapshots (each index's active one) that have no chunk to show:
 * a manifest line whose blob has no chunk rows, or a row whose chunk is gone. Every test file has
 * code, so an empty list is what a sound index gives.
 */
export async function filesWithoutChunks(prisma: PrismaClient, projectId: number): Promise<Array<{ ref: string; path: string }>> {
  return prisma.$queryRawUnsafe<Array<{ ref: string; path: string }>>(
    `SELECT i.ref, f.path FROM code_indexes i
       JOIN code_index_files f ON f.snapshot_id = i.active_snapshot_id
      WHERE i.project_id = $1
        AND NOT EXISTS (SELECT 1 FROM code_blob_chunks b JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id
                         WHERE b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant)
      ORDER BY i.ref, f.path`,
    projectId,
  );
}
