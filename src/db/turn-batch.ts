/**
 * Group commit for a hot write: the items handed in during one event-loop turn are written by one
 * `write` call (one multi-row statement, one transaction) when the turn ends (setImmediate), and
 * every caller's promise settles with that write. If it fails, each item of the batch is written
 * again on its own, so a caller gets its own item's outcome, never a neighbour's error. A caller
 * that awaits its item before going on keeps its order (the row is there once the promise resolves).
 */
export function turnBatch<Item>(write: (items: readonly Item[]) => Promise<void>): (item: Item) => Promise<void> {
  // A write's error is passed on as it was thrown.
  let pending: Array<{ item: Item; resolve: () => void; reject: (error: Error) => void }> = [];
  const flush = async () => {
    const batch = pending;
    pending = [];
    try {
      await write(batch.map((entry) => entry.item));
      for (const entry of batch) entry.resolve();
    } catch (error) {
      if (batch.length === 1) return batch[0].reject(error as Error);
      await Promise.all(batch.map((entry) => write([entry.item]).then(entry.resolve, (alone: unknown) => entry.reject(alone as Error))));
    }
  };
  return (item) =>
    new Promise<void>((resolve, reject) => {
      if (pending.length === 0) setImmediate(() => void flush());
      pending.push({ item, resolve, reject });
    });
}
