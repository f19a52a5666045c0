import type { CodeIndex, PrismaClient } from '../db/prisma';

/** How far a ref's index run is, as a waiting answer reports it. */
export type IndexRunProgress = {
  state: CodeIndex['state'];
  filesIndexed: number;
  /** Null until the run has listed its files. */
  filesTotal: number | null;
};

export type AwaitIndexOptions = {
  prisma: PrismaClient;
  projectId: number;
  ref: string;
  /** The longest wait. */
  timeoutMs: number;
  /** How often the index row is read. Default 500 ms. */
  pollMs?: number;
  /**
   * Files a run goes through per second, assumed until this run has shown its own pace. Default
   * 50 (the demo's 577 files take about 10 s on two cores).
   */
  filesPerSecond?: number;
  /** Called when the progress changes (and once at the start). */
  onProgress?: (progress: IndexRunProgress) => void | Promise<void>;
  signal?: AbortSignal;
};

export type AwaitIndexResult =
  | { outcome: 'ready'; index: CodeIndex }
  | { outcome: 'failed'; index: CodeIndex }
  /** The run would end after the deadline (estimated from its files and pace), or the deadline passed. */
  | { outcome: 'too_slow'; progress: IndexRunProgress | null; remainingMs: number | null }
  | { outcome: 'aborted' };

/**
 * Measured over at least this long, a run's own pace may end the wait early. A run's first seconds
 * are its slowest (the first batches are small, the chunk threads start), so the measure is long and
 * the verdict lenient: only a run that would need more than twice the time left is given up on.
 * Waiting on a little too long costs at most the bound; giving up wrongly costs the answer its code.
 */
const MEASURE_MS = 5_000;
const PACE_SLACK = 2;
/** After the last file: activating the snapshot, refreshing the answer. */
const ACTIVATION_MS = 1_000;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * Waits for a ref's first index to become searchable, bounded: the row is read every pollMs (the
 * run may be in another process), its progress reported as it changes. Gives up before the deadline
 * when the run clearly cannot end in time: once it has listed its files, when their count at the
 * assumed pace would take longer than the bound, or, once its own pace is measured, when that pace
 * needs more than twice the time left. A run that has not started or not listed its files yet is
 * waited for until the deadline.
 */
export async function awaitIndex(options: AwaitIndexOptions): Promise<AwaitIndexResult> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  const pollMs = options.pollMs ?? 500;
  const assumedPace = (options.filesPerSecond ?? 50) / 1000;
  let reported: string | null = null;
  // Where this run's pace is measured from: the first reading after it listed its files.
  let baseline: { at: number; files: number } | null = null;
  for (;;) {
    if (options.signal?.aborted) return { outcome: 'aborted' };
    const index = await options.prisma.codeIndex.findUnique({
      where: { projectId_ref: { projectId: options.projectId, ref: options.ref } },
    });
    if (index?.activeSnapshotId != null) return { outcome: 'ready', index };
    if (index?.state === 'failed') return { outcome: 'failed', index };
    const now = Date.now();
    const progress: IndexRunProgress | null = index
      ? { state: index.state, filesIndexed: index.filesIndexed, filesTotal: index.filesTotal }
      : null;
    if (progress) {
      const key = `${progress.state}:${progress.filesIndexed}:${progress.filesTotal}`;
      if (key !== reported) {
        reported = key;
        await options.onProgress?.(progress);
      }
    }
    let remainingMs: number | null = null;
    if (progress?.state === 'indexing' && progress.filesTotal !== null) {
      baseline ??= { at: now, files: progress.filesIndexed };
      const left = Math.max(0, progress.filesTotal - progress.filesIndexed);
      const pace = (progress.filesIndexed - baseline.files) / Math.max(1, now - baseline.at);
      if (now - baseline.at >= MEASURE_MS) {
        // No file done since the measure began (one slow batch) says nothing yet: the bound decides.
        remainingMs = pace > 0 ? Math.ceil(left / pace) + ACTIVATION_MS : null;
        if (remainingMs !== null && remainingMs > PACE_SLACK * (deadline - now)) return { outcome: 'too_slow', progress, remainingMs };
      } else {
        // Too many files for the bound even at a good pace: not worth waiting for at all.
        remainingMs = Math.ceil(left / assumedPace) + ACTIVATION_MS;
        if (now + remainingMs > deadline) return { outcome: 'too_slow', progress, remainingMs };
      }
    }
    if (now >= deadline) return { outcome: 'too_slow', progress, remainingMs };
    await sleep(Math.min(pollMs, Math.max(0, deadline - now)), options.signal);
  }
}
