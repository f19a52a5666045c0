import type { PrismaClient } from '../db/prisma';
import { directoryCondition, type SearchScope } from './search-scope';

export type DirectoryFile = { path: string; blob: string; language: string | null; content: string; lines: number };

/** Characters of code in a directory of a snapshot (each distinct chunk of each file counted once). */
export async function directorySize(prisma: PrismaClient, scope: SearchScope): Promise<{ files: number; chars: number }> {
  const directory = directoryCondition(scope.directory, 3);
  const [row] = await prisma.$queryRawUnsafe<Array<{ files: bigint; chars: bigint | null }>>(
    `SELECT count(DISTINCT f.path) AS files, sum(length(c.content)) AS chars
       FROM code_index_files f
       JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant
       JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id
      WHERE f.project_id = $1 AND f.snapshot_id = $2::bigint AND ${directory.sql}`,
    scope.projectId,
    scope.snapshotId,
    ...directory.parameters,
  );
  return { files: Number(row?.files ?? 0), chars: Number(row?.chars ?? 0) };
}

/**
 * The files of a directory put back together from their chunks (chunks cover every non-blank
 * line; lines between chunks come back blank), for a directory small enough to give whole.
 */
export async function directoryFiles(prisma: PrismaClient, scope: SearchScope): Promise<DirectoryFile[]> {
  const directory = directoryCondition(scope.directory, 3);
  const rows = await prisma.$queryRawUnsafe<
    Array<{ path: string; blob: string; language: string | null; startLine: number; content: string }>
  >(
    `SELECT f.path, f.blob, b.language, b.start_line AS "startLine", c.content
       FROM code_index_files f
       JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant
       JOIN code_chunks c ON c.project_id = b.project_id AND c.id = b.chunk_id
      WHERE f.project_id = $1 AND f.snapshot_id = $2::bigint AND ${directory.sql}
      ORDER BY f.path, b.seq`,
    scope.projectId,
    scope.snapshotId,
    ...directory.parameters,
  );
  const files = new Map<string, { blob: string; language: string | null; lines: Map<number, string> }>();
  for (const row of rows) {
    let file = files.get(row.path);
    if (!file) {
      file = { blob: row.blob, language: row.language, lines: new Map() };
      files.set(row.path, file);
    }
    row.content.split('\n').forEach((line, index) => file.lines.set(row.startLine + index, line));
  }
  return [...files.entries()].map(([path, file]) => {
    const last = Math.max(0, ...file.lines.keys());
    const lines: string[] = [];
    for (let line = 1; line <= last; line += 1) lines.push(file.lines.get(line) ?? '');
    return { path, blob: file.blob, language: file.language, content: lines.join('\n'), lines: last };
  });
}
