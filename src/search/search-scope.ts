import type { ChunkScope } from '../db/code-chunks';
import { badInput } from '../errors';

/** The part of a ref's index a search looks at: a snapshot, optionally one directory of it. */
export type SearchScope = ChunkScope;

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
