import { directoryChunkRows, fileChunkRows, parentDirectories, type FileChunkRow } from '../db/code-chunks';
import { normalizeDirectory, type SearchScope } from './search-scope';

export { directorySize } from '../db/code-chunks';

/** One file of a snapshot put back together from its chunks. */
export type SnapshotFile = { path: string; blob: string; language: string | null; content: string; lines: number };

/**
 * Files put back together from their chunks, in the rows' order (chunks cover every non-blank
 * line, so the lines between them come back blank).
 */
function assembleFiles(rows: readonly FileChunkRow[]): SnapshotFile[] {
  const files = new Map<string, { blob: string; language: string | null; lines: Map<number, string> }>();
  for (const row of rows) {
    let file = files.get(row.path);
    if (!file) {
      file = { blob: row.blob, language: row.language, lines: new Map() };
      files.set(row.path, file);
    }
    file.language ??= row.language;
    if (row.startLine === null || row.content === null) continue;
    const startLine = row.startLine;
    row.content.split('\n').forEach((line, index) => file.lines.set(startLine + index, line));
  }
  return [...files.entries()].map(([path, file]) => {
    const last = Math.max(0, ...file.lines.keys());
    const lines: string[] = [];
    for (let line = 1; line <= last; line += 1) lines.push(file.lines.get(line) ?? '');
    return { path, blob: file.blob, language: file.language, content: lines.join('\n'), lines: last };
  });
}

/** The files of a directory of a snapshot, for a directory small enough to give whole. */
export async function directoryFiles(prisma: Parameters<typeof directoryChunkRows>[0], scope: SearchScope): Promise<SnapshotFile[]> {
  return assembleFiles(await directoryChunkRows(prisma, scope));
}

/** A file of a snapshot as the file view shows it; null when the snapshot has no such file. */
export async function readSnapshotFile(
  prisma: Parameters<typeof fileChunkRows>[0],
  options: { projectId: number; snapshotId: bigint; path: string },
): Promise<SnapshotFile | null> {
  return assembleFiles(await fileChunkRows(prisma, options))[0] ?? null;
}

/**
 * The directories of a snapshot (every ancestor of every file), sorted, optionally only those
 * containing `search`, at most `limit`: what a directory picker offers.
 */
export async function snapshotDirectories(
  prisma: Parameters<typeof parentDirectories>[0],
  options: { projectId: number; snapshotId: bigint; search?: string | null; limit: number; keep?: (directory: string) => boolean },
): Promise<string[]> {
  // The distinct parent directories are few even in a large repository; their ancestors are added here.
  const all = new Set<string>();
  for (const directory of await parentDirectories(prisma, options)) {
    const parts = normalizeDirectory(directory).split('/').filter(Boolean);
    for (let depth = 1; depth <= parts.length; depth += 1) all.add(parts.slice(0, depth).join('/'));
  }
  const needle = options.search?.trim().toLowerCase();
  return [...all]
    .filter((directory) => (!needle || directory.toLowerCase().includes(needle)) && (options.keep?.(directory) ?? true))
    .sort()
    .slice(0, options.limit);
}
