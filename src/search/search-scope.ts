import { badInput } from '../errors';

/** The part of a ref's index a search looks at: a snapshot, optionally one directory of it. */
export type SearchScope = {
  projectId: number;
  snapshotId: bigint;
  /** Normalised to end with `/`, or '' for the whole repository. */
  directory: string;
};

/**
 * A directory as the user or IDE wrote it (`src/lib`, `./src/lib/`, `/src`) made into a prefix
 * ending in `/`; climbing out (`..`), backslashes and control characters are refused.
 */
export function normalizeDirectory(input: string | null | undefined, field = 'directory'): string {
  const raw = (input ?? '').trim();
  if (!raw || raw === '.' || raw === '/' || raw === './') return '';
  if (raw.length > 1024) throw badInput(`${field} is too long (maximum is 1024 characters)`, field);
  if (/[\\\0-\x1f]/.test(raw)) throw badInput(`${field} must be a repository path with forward slashes`, field);
  const parts = raw.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.some((part) => part === '..')) throw badInput(`${field} must stay inside the repository ("..")`, field);
  return parts.length ? `${parts.join('/')}/` : '';
}

/** SQL for "f.path is in the scope's directory", as a range on the C-collated primary key. */
export function directoryCondition(directory: string, firstParameter: number): { sql: string; parameters: string[] } {
  if (!directory) return { sql: 'TRUE', parameters: [] };
  // Every path under `dir/` sorts between `dir/` and `dir0` ('0' follows '/').
  const upper = `${directory.slice(0, -1)}0`;
  return { sql: `f.path >= $${firstParameter} AND f.path < $${firstParameter + 1}`, parameters: [directory, upper] };
}
