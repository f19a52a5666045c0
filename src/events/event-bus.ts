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

/** A channel's listeners in this process, and its SUBSCRIBE: every listen waits for it, not only the first. */
type Channel = { listeners: Set<Listener<unknown>>; subscribed: Promise<unknown> };

/**
 * Events over Redis pub/sub, so that every API replica delivers what any worker publishes. One
 * subscriber connection per process, fanned out to in-process listeners by channel. Channel names
 * come from src/redis-keys.ts.
 */
export class EventBus {
  private subscriber: Redis | null = null;
  private readonly channels = new Map<string, Channel>();

  constructor(private readonly options: EventBusOptions) {}

  async publish(channel: string, payload: unknown): Promise<void> {
    await this.options.redis.publish(channel, JSON.stringify(payload));
  }

  /**
   * Resolves once Redis confirmed the subscription, so no event published after it is missed: a second listen
   * made while the first one's SUBSCRIBE is on its way waits for it too. A SUBSCRIBE that fails fails every
   * listen that waited for it, and the next listen tries again.
   */
  async listen<T>(name: string, listener: Listener<T>): Promise<() => Promise<void>> {
    const subscriber = this.ensureSubscriber();
    let channel = this.channels.get(name);
    if (!channel) {
      const created: Channel = { listeners: new Set(), subscribed: subscriber.subscribe(name) };
      created.subscribed.catch(() => {
        if (this.channels.get(name) === created) this.channels.delete(name);
      });
      this.channels.set(name, created);
      channel = created;
    }
    channel.listeners.add(listener as Listener<unknown>);
    const stop = async () => {
      const current = this.channels.get(name);
      if (current !== channel || !current.listeners.delete(listener as Listener<unknown>) || current.listeners.size > 0) return;
      this.channels.delete(name);
      await subscriber.unsubscribe(name).catch(() => undefined);
    };
    try {
      await channel.subscribed;
    } catch (error) {
      channel.listeners.delete(listener as Listener<unknown>);
      throw error;
    }
    return stop;
  }

  private ensureSubscriber(): Redis {
    if (this.subscriber) return this.subscriber;
    const subscriber = this.options.createSubscriber();
    subscriber.on('message', (name: string, raw: string) => {
      const listeners = this.channels.get(name)?.listeners;
      if (!listeners) return;
      let payload: unknown;
      try {
        payload = JSON.parse(raw);
      } catch (error) {
        this.options.logger.warn({ event: 'event_unreadable', channel: name, err: error }, 'unreadable event');
        return;
      }
      for (const listener of listeners) listener(payload);
    });
    this.subscriber = subscriber;
    return subscriber;
  }

  async close(): Promise<void> {
    this.channels.clear();
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
