import { createFileFilter } from '../../src/indexing/file-filter';
import { SELECT_SLICE, selectFiles } from '../../src/indexing/select-files';
import type { SkipReason } from '../../src/indexing/file-filter';

describe('selectFiles', () => {
  const candidates = Array.from({ length: SELECT_SLICE * 3 + 10 }, (_, index) => ({
    path: index % 5 === 0 ? `node_modules/dep${index}.js` : `src/dir${index % 7}/file${index}.ts`,
    blob: index.toString(16).padStart(40, '0'),
    mode: '100644',
    size: index,
  }));

  it('keeps what the filter keeps, in order, with what describe adds, and counts the rest by reason', async () => {
    const filter = createFileFilter();
    const skipped: Partial<Record<SkipReason, number>> = {};
    const selected = await selectFiles(
      candidates,
      filter,
      (path) => ({ variant: `v|${path.length}` }),
      (reason) => {
        skipped[reason] = (skipped[reason] ?? 0) + 1;
      },
    );
    const kept = candidates.filter((entry) => filter.byPath(entry.path, entry.size) === null);
    expect(selected).toEqual(kept.map((entry) => ({ ...entry, variant: `v|${entry.path.length}` })));
    expect(skipped).toEqual({ vendored: candidates.length - kept.length });
  });

  it('lets the event loop run between slices of a large tree, and not within a small one', async () => {
    const turnsDuring = async (count: number) => {
      let turns = 0;
      let done = false;
      const tick = () => {
        if (done) return;
        turns += 1;
        setImmediate(tick);
      };
      setImmediate(tick);
      await selectFiles(
        candidates.slice(0, count),
        createFileFilter(),
        () => ({}),
        () => undefined,
      );
      done = true;
      return turns;
    };
    expect(await turnsDuring(SELECT_SLICE)).toBe(0);
    expect(await turnsDuring(candidates.length)).toBeGreaterThanOrEqual(3);
  });
});
