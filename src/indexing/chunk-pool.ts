import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger';
import { threadFile } from '../paths';
import { chunkAndEmbed, type ChunkEmbedSpec, type EmbeddedChunk, type FileToChunk } from './chunk-embed';
import type { ChunkTaskMessage, ChunkTaskReply } from './chunk.thread';

/** Cuts files into chunks (with vectors when the embedder allows): in worker threads, or in this thread. */
export interface FileChunker {
  /** One entry per file, in order. */
  chunkAndEmbed(files: readonly FileToChunk[], spec: ChunkEmbedSpec, options?: { signal?: AbortSignal }): Promise<EmbeddedChunk[][]>;
}

/** Chunks on the calling thread: for admin commands, tests of the chunker, and INDEX_THREADS=0. */
export const inProcessChunker: FileChunker = {
  chunkAndEmbed: (files, spec) => chunkAndEmbed(files, spec),
};

export type ChunkPoolOptions = {
  /** Worker threads at most. Default 1. */
  threads?: number;
  /** Threads are stopped after this long without work, giving their memory (grammars, WASM heap) back. Default 30,000 ms. */
  idleMs?: number;
  /**
   * A task gets at most this many source bytes (a file larger than it is a task of its own). Default
   * 98,304: a batch of 200 files is then four or five tasks, so two threads finish it together (with
   * 256 KiB tasks the second thread waited on most batches: rxjs 1.67 against 2.1–2.4 MB/s).
   */
  taskBytes?: number;
  logger?: Logger;
};

type Task = {
  files: FileToChunk[];
  spec: ChunkEmbedSpec;
  resolve: (chunks: EmbeddedChunk[][]) => void;
  reject: (error: Error) => void;
};

type Slot = { worker: Worker; task: (Task & { id: number }) | null };

const THREAD_YOUNG_GENERATION_MB = 8;
const THREAD = threadFile(__filename, 'chunk.thread');

/**
 * A small pool of worker threads that chunk and embed files, so an index run never holds up the
 * requests the same process serves. Threads start on first use and stop when idle.
 */
export class ChunkPool implements FileChunker {
  private readonly size: number;
  private readonly idleMs: number;
  private readonly taskBytes: number;
  private readonly logger: Logger | undefined;
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(options: ChunkPoolOptions = {}) {
    this.size = Math.max(1, options.threads ?? 1);
    this.idleMs = options.idleMs ?? 30_000;
    this.taskBytes = options.taskBytes ?? 98_304;
    this.logger = options.logger;
  }

  /** Threads running now (they stop when idle). */
  get threadCount(): number {
    return this.slots.length;
  }

  async chunkAndEmbed(
    files: readonly FileToChunk[],
    spec: ChunkEmbedSpec,
    options: { signal?: AbortSignal } = {},
  ): Promise<EmbeddedChunk[][]> {
    if (this.closed) throw new Error('the chunk pool is closed');
    options.signal?.throwIfAborted();
    const groups: FileToChunk[][] = [];
    let group: FileToChunk[] = [];
    let bytes = 0;
    for (const file of files) {
      if (group.length && bytes + file.content.length > this.taskBytes) {
        groups.push(group);
        group = [];
        bytes = 0;
      }
      group.push(file);
      bytes += file.content.length;
    }
    if (group.length) groups.push(group);
    const results = await Promise.all(
      groups.map((part) => new Promise<EmbeddedChunk[][]>((resolve, reject) => this.enqueue({ files: part, spec, resolve, reject }))),
    );
    return results.flat();
  }

  /** Stops the threads; tasks still waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    for (const task of this.queue.splice(0)) task.reject(new Error('the chunk pool closed'));
    await Promise.all(this.slots.splice(0).map((slot) => this.stop(slot)));
  }

  private enqueue(task: Task): void {
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    this.queue.push(task);
    this.dispatch();
  }

  private dispatch(): void {
    while (this.queue.length) {
      let slot = this.slots.find((candidate) => candidate.task === null);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      const task = this.queue.shift()!;
      slot.task = { ...task, id: this.nextId++ };
      slot.worker.postMessage({ id: slot.task.id, files: task.files, spec: task.spec } satisfies ChunkTaskMessage);
    }
    if (this.slots.every((slot) => slot.task === null) && this.slots.length && !this.idleTimer) {
      this.idleTimer = setTimeout(() => {
        this.idleTimer = null;
        const idle = this.slots.splice(0);
        this.logger?.debug({ event: 'chunk_threads_stopped', threads: idle.length }, 'indexing threads stopped after being idle');
        void Promise.all(idle.map((slot) => this.stop(slot)));
      }, this.idleMs);
      this.idleTimer.unref();
    }
  }

  private spawn(): Slot {
    const worker = new Worker(THREAD.file, {
      execArgv: THREAD.execArgv,
      name: 'duo-chunker',
      // A thread allocates fast (chunks, terms, vector text) and V8 lets the young generation of
      // such a heap grow to 32 MiB or more; a small one costs a few more scavenges and ~25 MiB
      // less memory per thread. The old generation is left unbounded (a large file needs it).
      resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
    });
    const slot: Slot = { worker, task: null };
    worker.on('message', (reply: ChunkTaskReply) => {
      const task = slot.task;
      if (!task || task.id !== reply.id) return;
      slot.task = null;
      if ('error' in reply) {
        const error = new Error(`chunking failed in a worker thread: ${reply.error.message}`);
        error.stack = reply.error.stack ?? error.stack;
        task.reject(error);
      } else task.resolve(reply.chunks);
      this.dispatch();
    });
    const fail = (error: Error) => {
      const index = this.slots.indexOf(slot);
      if (index >= 0) this.slots.splice(index, 1);
      if (slot.task) slot.task.reject(error);
      slot.task = null;
      if (!this.closed) this.dispatch();
    };
    worker.on('error', (error) => {
      this.logger?.warn({ event: 'chunk_thread_failed', err: error }, 'an indexing thread failed');
      fail(error);
    });
    worker.on('exit', (code) => fail(new Error(`an indexing thread exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }

  private async stop(slot: Slot): Promise<void> {
    slot.worker.removeAllListeners('exit');
    await slot.worker.terminate();
  }
}
