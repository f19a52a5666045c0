import type { PrismaClient } from '../../src/db/prisma';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type WaitOptions<T> = {
  /** Default 10 s. */
  timeoutMs?: number;
  /** Default 50 ms. */
  intervalMs?: number;
  /** Named in the error when time runs out (a function is called then). */
  what?: string | (() => string);
  /** The value is good enough; default: truthy. */
  until?: (value: T) => boolean;
};

/** Reads until the value passes (`until`, or truthy), and returns it; throws with the last value when time runs out. */
export async function waitUntil<T>(read: () => T | Promise<T>, options: WaitOptions<T> = {}): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 50, what = 'condition', until = (value: T) => Boolean(value) } = options;
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (until(value)) return value;
    if (Date.now() - started > timeoutMs) {
      const described = typeof what === 'function' ? what() : what;
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${described}; last value: ` +
          `${JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? String(item) : item))}`,
      );
    }
    await sleep(intervalMs);
  }
}

/** Waits until a project's code index of a ref reaches a state (default ready) and returns its row. */
export function waitForIndex(
  prisma: PrismaClient,
  options: { projectId: number; ref?: string; state?: 'ready' | 'failed'; timeoutMs?: number },
) {
  const { projectId, ref = 'main', state = 'ready', timeoutMs = 20_000 } = options;
  return waitUntil(() => prisma.codeIndex.findUnique({ where: { projectId_ref: { projectId, ref } } }), {
    until: (index) => index?.state === state,
    timeoutMs,
    intervalMs: 100,
    what: `the index of project ${projectId} (${ref}) to be ${state}`,
  });
}
