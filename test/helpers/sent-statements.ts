import pg from 'pg';

/**
 * The SQL texts every `pg` pool of this process sent while `work` ran (a test service runs in the
 * test's process: its API and its workers alike). Watches; changes nothing.
 */
export async function sentStatements<T>(work: () => Promise<T>): Promise<{ result: T; texts: string[] }> {
  const texts: string[] = [];
  const query = pg.Pool.prototype.query;
  const spy = jest.spyOn(pg.Pool.prototype, 'query').mockImplementation(function (this: pg.Pool, ...args: unknown[]) {
    const config = args[0] as string | { text: string };
    texts.push(typeof config === 'string' ? config : config.text);
    return (query as (...rest: unknown[]) => unknown).apply(this, args);
  });
  try {
    return { result: await work(), texts };
  } finally {
    spy.mockRestore();
  }
}

/**
 * How many exact vector ranking statements (a project outside the HNSW graph) `texts` holds, and how
 * many of them checked each vector against the snapshot's files (exactStatement in src/db/code-chunks.ts).
 */
export function scopeChecks(texts: readonly string[]): { searches: number; checked: number } {
  const searches = texts.filter((text) => text.includes('FROM code_chunk_vectors c'));
  return {
    searches: searches.length,
    checked: searches.filter((text) => text.includes('c.id IN (SELECT b.chunk_id')).length,
  };
}
