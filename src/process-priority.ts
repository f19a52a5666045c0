import { readdirSync } from 'node:fs';
import os from 'node:os';
import type { Logger } from './logger';

export type LowerCpuPriorityOptions = {
  /** The nice value to run at (0–19); a process already running nicer keeps its own. */
  nice: number;
  logger: Logger;
};

/**
 * Runs this process at a lower CPU priority, so that on a machine it shares with the API the
 * scheduler serves requests first and background work (chat answers, index runs) takes what is
 * left: it is never starved, only second in line when the cores are all busy (WORKER_NICE).
 *
 * On Linux a nice value belongs to each thread, not the process: every thread running now is set
 * (the main thread, libuv's and V8's), and threads started later (chunk threads, libuv's pool)
 * inherit it from the thread that starts them. Elsewhere the process is set as a whole.
 * Returns the threads set.
 */
export function lowerCpuPriority(options: LowerCpuPriorityOptions): number {
  const { nice, logger } = options;
  if (nice <= 0) return 0;
  const threads = threadIds();
  let set = 0;
  for (const thread of threads) {
    try {
      // Never raise a priority: a process started nicer (`nice -n 15 …`) stays as it is.
      if (os.getPriority(thread) < nice) os.setPriority(thread, nice);
      set += 1;
    } catch (error) {
      // A thread that ended meanwhile has nothing left to set.
      if ((error as { info?: { code?: string } }).info?.code !== 'ESRCH') throw error;
    }
  }
  logger.info({ event: 'cpu_priority_lowered', nice, threads: set }, `running at nice ${nice} (or nicer, as started)`);
  return set;
}

function threadIds(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number);
  } catch {
    return [process.pid];
  }
}
