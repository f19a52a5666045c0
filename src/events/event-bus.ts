import type { Redis } from 'ioredis';
import type { Logger } from '../logger';

export type EventBusOptions = {
  /** For PUBLISH. */
  redis: Redis;
  /** A connection in subscriber mode is dedicated to it: this makes a new one, once. */
  createSubscriber: () => Redis;
  logger: Logger;
};

export type Listener<T> = (payload: T) => void;

/**
 * Events over Redis pub/sub, so that every API replica delivers what any worker publishes. One
 * subscriber connection per process, fanned out to in-process listeners by channel. Channel names
 * come from src/redis-keys.ts.
 */
export class EventBus {
  private subscriber: Redis | null = null;
  private readonly listeners = new Map<string, Set<Listener<unknown>>>();

  constructor(private readonly options: EventBusOptions) {}

  async publish(channel: string, payload: unknown): Promise<void> {
    await this.options.redis.publish(channel, JSON.stringify(payload));
  }

  /** Resolves once Redis confirmed the subscription, so no event published after it is missed. */
  async listen<T>(channel: string, listener: Listener<T>): Promise<() => Promise<void>> {
    const subscriber = this.ensureSubscriber();
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await subscriber.subscribe(channel);
    }
    set.add(listener as Listener<unknown>);
    return async () => {
      const current = this.listeners.get(channel);
      if (!current?.delete(listener as Listener<unknown>) || current.size > 0) return;
      this.listeners.delete(channel);
      await subscriber.unsubscribe(channel).catch(() => undefined);
    };
  }

  private ensureSubscriber(): Redis {
    if (this.subscriber) return this.subscriber;
    const subscriber = this.options.createSubscriber();
    subscriber.on('message', (channel: string, raw: string) => {
      const set = this.listeners.get(channel);
      if (!set) return;
      let payload: unknown;
      try {
        payload = JSON.parse(raw);
      } catch (error) {
        this.options.logger.warn({ event: 'event_unreadable', channel, err: error }, 'unreadable event');
        return;
      }
      for (const listener of set) listener(payload);
    });
    this.subscriber = subscriber;
    return subscriber;
  }

  async close(): Promise<void> {
    this.listeners.clear();
    const subscriber = this.subscriber;
    this.subscriber = null;
    await subscriber?.quit().catch(() => subscriber.disconnect());
  }
}

/**
 * Turns a listener subscription into the async iterator GraphQL subscriptions return: values are
 * queued until read; `return()` (the client went away) unsubscribes.
 */
export async function listenerIterator<T>(
  listen: (push: (value: T) => void) => Promise<() => Promise<void>>,
): Promise<AsyncIterableIterator<T>> {
  const queue: T[] = [];
  let wake: (() => void) | null = null;
  let done = false;
  const unsubscribe = await listen((value) => {
    if (done) return;
    queue.push(value);
    wake?.();
  });
  const finish = async (): Promise<IteratorResult<T>> => {
    if (!done) {
      done = true;
      wake?.();
      await unsubscribe();
    }
    return { value: undefined, done: true };
  };
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    async next(): Promise<IteratorResult<T>> {
      while (!done) {
        if (queue.length > 0) return { value: queue.shift()!, done: false };
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
      return { value: undefined, done: true };
    },
    return: finish,
    throw: async (error: unknown) => {
      await finish();
      throw error;
    },
  };
  return iterator;
}
