import type { PrismaClient } from '../db/prisma';
import { normalizeDirectory } from './search-scope';

/** One file of a snapshot as the file view shows it. */
export type SnapshotFile = { path: string; blob: string; language: string | null; content: string };

/**
 * A file of a snapshot put back together from its chunks (chunks cover every non-blank line, so
 * the lines between them are blank ones). Null when the snapshot has no such file.
 */
export async function readSnapshotFile(
  prisma: PrismaClient,
  options: { projectId: number; snapshotId: bigint; path: string },
): Promise<SnapshotFile | null> {
  const rows = await prisma.$queryRawUnsafe<
    Array<{ blob: string; language: string | null; startLine: number | null; content: string | null }>
  >(
    `SELECT f.blob, b.language, b.start_line AS "startLine", c.content
       FROM code_index_files f
       LEFT JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant
       LEFT JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id
      WHERE f.project_id = $1 AND f.snapshot_id = $2::bigint AND f.path = $3
      ORDER BY b.seq`,
    options.projectId,
    options.snapshotId,
    options.path,
  );
  if (rows.length === 0) return null;
  const lines: string[] = [];
  for (const row of rows) {
    if (row.startLine === null || row.content === null) continue;
    row.content.split('\n').forEach((line, index) => {
      lines[row.startLine! - 1 + index] = line;
    });
  }
  return {
    path: options.path,
    blob: rows[0].blob,
    language: rows.find((row) => row.language)?.language ?? null,
    content: Array.from(lines, (line) => line ?? '').join('\n'),
  };
}

/**
 * The directories of a snapshot (every ancestor of every file), sorted, optionally only those
 * containing `search`, at most `limit`: what a directory picker offers.
 */
export async function snapshotDirectories(
  prisma: PrismaClient,
  options: { projectId: number; snapshotId: bigint; search?: string | null; limit: number },
): Promise<string[]> {
  // The distinct parent directories are few even in a large repository; their ancestors are added here.
  const rows = await prisma.$queryRawUnsafe<Array<{ directory: string }>>(
    `SELECT DISTINCT regexp_replace(f.path, '/[^/]*$', '') AS directory
       FROM code_index_files f
      WHERE f.project_id = $1 AND f.snapshot_id = $2::bigint AND position('/' in f.path) > 0`,
    options.projectId,
    options.snapshotId,
  );
  const all = new Set<string>();
  for (const { directory } of rows) {
    const parts = normalizeDirectory(directory).split('/').filter(Boolean);
    for (let depth = 1; depth <= parts.length; depth += 1) all.add(parts.slice(0, depth).join('/'));
  }
  const needle = options.search?.trim().toLowerCase();
  return [...all]
    .filter((directory) => !needle || directory.toLowerCase().includes(needle))
    .sort()
    .slice(0, options.limit);
}
