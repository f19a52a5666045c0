import type { PrismaClient } from '../db/prisma';
import type { EventBus } from '../events/event-bus';
import type { Logger } from '../logger';
import { snapshotActivatedChannel } from '../redis-keys';
import { forgetLexicalIndex, lexicalIndexKept, lexicalIndexOf } from './lexical-search';

/**
 * An index run made a new snapshot the one search reads for a ref: published by the worker that
 * ran it, heard by every process that serves searches. Ids as strings (JSON has no bigint).
 */
export type SnapshotActivated = { projectId: number; snapshotId: string; replacedSnapshotId: string | null };

/** Tells the processes that serve searches that a snapshot became active (see KeywordIndexWarmUp). */
export async function publishSnapshotActivated(options: { events: EventBus; prefix: string; event: SnapshotActivated }): Promise<void> {
  await options.events.publish(snapshotActivatedChannel(options.prefix), options.event);
}

export type KeywordIndexWarmUpOptions = {
  prisma: PrismaClient;
  events: EventBus;
  /** REDIS_PREFIX: the channel is the instance's own. */
  prefix: string;
  logger: Logger;
  /** Snapshots waiting to be built; past it the oldest waiting one is given up. Default 8. */
  maxPending?: number;
};

/**
 * Builds a newly active snapshot's keyword index (lexical-search.ts) in the background, so the first
 * question about a pushed branch does not wait for it (about a second at 10,000 chunks, several at
 * 25,000). Bounded: one build at a time, at most `maxPending` waiting, newest kept; a snapshot that a
 * newer run of the same project replaced before its turn is not built. The index replaced is dropped
 * from the cache at once: no search reads it again. A search arriving during a build waits for that
 * build instead of starting its own. `close()` stops listening, gives up what waits and waits for
 * the build in progress (a statement and a synchronous build, which cannot be cut short).
 */
export class KeywordIndexWarmUp {
  private readonly pending: SnapshotActivated[] = [];
  private running: Promise<void> | null = null;
  private stopListening: (() => Promise<void>) | null = null;
  private closed = false;

  constructor(private readonly options: KeywordIndexWarmUpOptions) {}

  /** Resolves once the channel is subscribed: a snapshot activated after it is warmed. */
  async start(): Promise<void> {
    this.stopListening = await this.options.events.listen<SnapshotActivated>(snapshotActivatedChannel(this.options.prefix), (event) =>
      this.enqueue(event),
    );
  }

  /** Queues a snapshot to build (what the channel's listener calls). */
  enqueue(event: SnapshotActivated): void {
    if (this.closed || !isSnapshotActivated(event)) return;
    if (event.replacedSnapshotId !== null) forgetLexicalIndex({ projectId: event.projectId, snapshotId: BigInt(event.replacedSnapshotId) });
    // A waiting snapshot of the project that this one replaced will never be searched.
    const replaced = this.pending.findIndex(
      (waiting) => waiting.projectId === event.projectId && waiting.snapshotId === event.replacedSnapshotId,
    );
    if (replaced !== -1) this.pending.splice(replaced, 1);
    this.pending.push(event);
    const maxPending = this.options.maxPending ?? 8;
    while (this.pending.length > maxPending) {
      const dropped = this.pending.shift()!;
      this.options.logger.info(
        { event: 'keyword_index_warm_up_dropped', projectId: dropped.projectId, snapshotId: dropped.snapshotId },
        'too many snapshots to warm up: the oldest waiting is left to its first search',
      );
    }
    this.running ??= this.drain().finally(() => (this.running = null));
  }

  private async drain(): Promise<void> {
    for (let next = this.pending.shift(); next && !this.closed; next = this.pending.shift()) {
      const scope = { projectId: next.projectId, snapshotId: BigInt(next.snapshotId) };
      if (lexicalIndexKept(scope)) continue;
      const started = Date.now();
      try {
        const index = await lexicalIndexOf(this.options.prisma, scope, 'warm_up');
        this.options.logger.info(
          {
            event: 'keyword_index_warmed',
            projectId: next.projectId,
            snapshotId: next.snapshotId,
            ...index.size,
            ms: Date.now() - started,
          },
          "a new snapshot's keyword index was built before its first search",
        );
      } catch (error) {
        // The first search builds it instead (and says so if it fails too).
        this.options.logger.warn(
          { event: 'keyword_index_warm_up_failed', projectId: next.projectId, snapshotId: next.snapshotId, err: error },
          "could not build a new snapshot's keyword index ahead of its first search",
        );
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.pending.length = 0;
    await this.stopListening?.();
    this.stopListening = null;
    await this.running;
  }
}

function isSnapshotActivated(event: unknown): event is SnapshotActivated {
  const candidate = event as Partial<SnapshotActivated> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    Number.isInteger(candidate.projectId) &&
    typeof candidate.snapshotId === 'string' &&
    /^\d+$/.test(candidate.snapshotId) &&
    (candidate.replacedSnapshotId === null ||
      (typeof candidate.replacedSnapshotId === 'string' && /^\d+$/.test(candidate.replacedSnapshotId)))
  );
}
