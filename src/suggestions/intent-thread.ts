import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger';
// Not '../parsing', whose index loads web-tree-sitter: the main thread needs only the grammars' names.
import { GRAMMARS, grammarForFileName } from '../parsing/grammars';
import { threadFile } from '../paths';
import type { DetectIntentInput, IntentDecision } from './detect-intent';
import { COMPLETION } from './intent';
import type { IntentTaskMessage, IntentTaskReply } from './intent.thread';

export type IntentThreadOptions = {
  /**
   * A detection gets this long (ms) from when the thread could take it, waiting included; then the
   * answer is a completion and a detection still running is ended with its thread.
   */
  timeoutMs: number;
  /** The thread stops after this long without work, giving its memory (grammars, WASM heap) back. Default 300,000 ms. */
  idleMs?: number;
  /**
   * After one of a user's detections outran its limit or broke the thread, that user's requests are
   * answered without detection for this long (ms). Default 60,000.
   */
  cooldownMs?: number;
  logger?: Logger;
};

type Task = {
  id: number;
  input: DetectIntentInput;
  userId: number | undefined;
  resolve: (decision: IntentDecision) => void;
  /** Runs from when the thread is ready; null while it starts. */
  timer: NodeJS.Timeout | null;
  queuedAt: number;
};

const THREAD = threadFile(__filename, 'intent.thread');
// Enough for the largest request (400,000 characters each side of the cursor) and its tree walk; a runaway ends the
// thread, not the process.
const THREAD_OLD_GENERATION_MB = 256;
const THREAD_YOUNG_GENERATION_MB = 8;
/** Users kept in cooldown at the most: past it, the ones whose cooldown ended are dropped first, then the oldest. */
const MAX_COOLING_USERS = 10_000;

/** What is answered when detection cannot: complete the code at the cursor, as when the request names no intent. */
export function fallbackDecision(fileName: string): IntentDecision {
  const grammar = grammarForFileName(fileName);
  return { ...COMPLETION, language: grammar ? GRAMMARS[grammar].language : null };
}

/**
 * Code suggestion intent detection on a thread of its own, one file at a time and each within a time
 * limit. Parsing adversarial text is quadratic in some grammars (a 20 KB Kotlin line: 1.6 s) and some
 * patterns can break tree-sitter's WebAssembly: here neither holds up the requests the process serves,
 * a detection that outruns its limit ends with the thread (a new one starts for the next), and the
 * request gets a completion. The thread starts on first use and stops when idle.
 *
 * Detections run one at a time, so a runaway holds up everyone's behind it. Each detection may name
 * the user it is for: a user whose detection ran away or broke the thread is answered without
 * detection (a completion, as the runaway was) for `cooldownMs`. One account sending such files
 * within its rate limit then costs the thread at most one limit's worth a cooldown, not all of it,
 * and its own next requests are answered at once instead of after the limit.
 */
export class IntentThread {
  private readonly timeoutMs: number;
  private readonly idleMs: number;
  private readonly logger: Logger | undefined;
  private worker: Worker | null = null;
  private ready = false;
  private running: Task | null = null;
  private readonly queue: Task[] = [];
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly cooldownMs: number;
  /** Users answered without detection, until when (performance.now()). */
  private readonly cooling = new Map<number, number>();

  constructor(options: IntentThreadOptions) {
    this.timeoutMs = options.timeoutMs;
    this.idleMs = options.idleMs ?? 300_000;
    this.cooldownMs = options.cooldownMs ?? 60_000;
    this.logger = options.logger;
  }

  /** Whether a thread is running now (it stops when idle, or when a detection outran its limit). */
  get started(): boolean {
    return this.worker !== null;
  }

  /** `userId`: whose request it is, for the cooldown after a runaway (none: no cooldown). */
  detect(input: DetectIntentInput, userId?: number): Promise<IntentDecision> {
    if (this.closed || (userId !== undefined && this.coolingDown(userId))) return Promise.resolve(fallbackDecision(input.fileName));
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    return new Promise((resolve) => {
      const task: Task = { id: this.nextId++, input, userId, resolve, timer: null, queuedAt: performance.now() };
      this.queue.push(task);
      if (this.ready) this.startTimer(task);
      this.dispatch();
    });
  }

  /** Stops the thread; detections still waiting or running are answered with a completion. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    for (const task of [...(this.running ? [this.running] : []), ...this.queue.splice(0)]) this.settle(task, null);
    this.running = null;
    await this.stopThread();
  }

  private dispatch(): void {
    if (this.closed || this.running) return;
    if (!this.queue.length) {
      this.scheduleIdleStop();
      return;
    }
    if (!this.worker) this.spawn();
    if (!this.ready) return;
    const task = this.queue.shift()!;
    this.running = task;
    this.worker!.postMessage({ id: task.id, input: task.input } satisfies IntentTaskMessage);
  }

  private startTimer(task: Task): void {
    task.timer = setTimeout(() => this.expire(task), this.timeoutMs);
  }

  private expire(task: Task): void {
    task.timer = null;
    const waitedMs = Math.round(performance.now() - task.queuedAt);
    const log = { fileName: task.input.fileName, characters: sizeOf(task.input), waitedMs, timeoutMs: this.timeoutMs };
    if (task === this.running) {
      this.coolDown(task);
      this.logger?.warn(
        { event: 'intent_detection_timeout', ...log, userId: task.userId, cooldownMs: task.userId === undefined ? null : this.cooldownMs },
        'intent detection outran its time limit: its thread was ended',
      );
      this.running = null;
      void this.stopThread();
    } else {
      const index = this.queue.indexOf(task);
      if (index < 0) return;
      this.queue.splice(index, 1);
      this.logger?.warn({ event: 'intent_detection_timeout', queued: true, ...log }, 'intent detection waited past its time limit');
    }
    this.settle(task, null);
    this.dispatch();
  }

  /** Answers a task with the thread's decision, or with the fallback. */
  private settle(task: Task, decision: IntentDecision | null): void {
    if (task.timer) clearTimeout(task.timer);
    task.timer = null;
    task.resolve(decision ?? fallbackDecision(task.input.fileName));
  }

  private spawn(): void {
    const worker = new Worker(THREAD.file, {
      execArgv: THREAD.execArgv,
      name: 'duo-intent',
      resourceLimits: { maxOldGenerationSizeMb: THREAD_OLD_GENERATION_MB, maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
    });
    this.worker = worker;
    this.ready = false;
    worker.on('message', (reply: IntentTaskReply) => {
      if (worker !== this.worker) return;
      if ('ready' in reply) {
        this.ready = true;
        for (const task of this.queue) if (!task.timer) this.startTimer(task);
      } else if (this.running?.id === reply.id) {
        const task = this.running;
        this.running = null;
        if ('error' in reply) {
          // A failed parse can leave tree-sitter's WebAssembly unusable: the next detection gets a new thread.
          this.coolDown(task);
          this.logger?.warn(
            { event: 'intent_detection_failed', fileName: task.input.fileName, err: reply.error },
            'intent detection failed',
          );
          void this.stopThread();
          this.settle(task, null);
        } else this.settle(task, reply.decision);
      }
      this.dispatch();
    });
    const lost = (error: Error) => {
      if (worker !== this.worker) return;
      this.worker = null;
      this.ready = false;
      if (this.running) {
        this.coolDown(this.running);
        this.logger?.warn({ event: 'intent_detection_failed', fileName: this.running.input.fileName, err: error }, 'intent thread failed');
        this.settle(this.running, null);
        this.running = null;
      }
      this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the intent detection thread exited with code ${code}`)));
  }

  private coolingDown(userId: number): boolean {
    const until = this.cooling.get(userId);
    if (until === undefined) return false;
    if (until > performance.now()) return true;
    this.cooling.delete(userId);
    return false;
  }

  /** The user of a detection that ran away or broke the thread gets no detection for a while. */
  private coolDown(task: Task): void {
    if (task.userId === undefined) return;
    const now = performance.now();
    if (this.cooling.size >= MAX_COOLING_USERS) {
      for (const [userId, until] of this.cooling) if (until <= now) this.cooling.delete(userId);
      for (const userId of this.cooling.keys()) {
        if (this.cooling.size < MAX_COOLING_USERS) break;
        this.cooling.delete(userId);
      }
    }
    this.cooling.delete(task.userId); // set again last: the Map's order is the order cooldowns end
    this.cooling.set(task.userId, now + this.cooldownMs);
  }

  private scheduleIdleStop(): void {
    if (!this.worker || this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (!this.running && !this.queue.length) void this.stopThread();
    }, this.idleMs);
    this.idleTimer.unref();
  }

  private async stopThread(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.ready = false;
    if (worker) await worker.terminate();
  }
}

function sizeOf(input: DetectIntentInput): number {
  return input.contentAboveCursor.length + (input.contentBelowCursor?.length ?? 0);
}
