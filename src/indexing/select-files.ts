import type { FileFilter, SkipReason } from './file-filter';
import type { TreeEntry } from './git-reader';

/** Files looked at between two turns of the event loop when a run picks its files (a large monorepo has 100,000). */
export const SELECT_SLICE = 4_096;

/**
 * The candidates the filter keeps by path and size, each with what `describe` adds (its variant), in
 * order; `skip` counts why the others were left out. It yields to the event loop every SELECT_SLICE
 * files, so requests are served while a large tree is looked at: 91,000 files held the event loop for
 * about a second before.
 */
export async function selectFiles<Extra extends object>(
  candidates: readonly TreeEntry[],
  filter: Pick<FileFilter, 'byPath'>,
  describe: (path: string) => Extra,
  skip: (reason: SkipReason) => void,
): Promise<Array<TreeEntry & Extra>> {
  const selected: Array<TreeEntry & Extra> = [];
  for (let index = 0; index < candidates.length; index += 1) {
    if (index > 0 && index % SELECT_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    const entry = candidates[index];
    const reason = filter.byPath(entry.path, entry.size);
    if (reason) skip(reason);
    else selected.push({ ...entry, ...describe(entry.path) });
  }
  return selected;
}
