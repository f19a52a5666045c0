import type { Redis } from 'ioredis';
import type { Logger } from '../logger';
import type { ContextItem } from './context-items';

/** What the gatekeeper decided about the prompt a message answers (GraphQL `extras.gatekeeper`). */
export type GatekeeperExtras = { status: string; intent: string | null; confidence: number; intents: string[]; confirmed?: boolean };

/** A chat message as subscribers receive it: stored messages, and chunks that are never stored. */
export type ChatMessageEvent = {
  id: string | null;
  requestId: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  /** ISO 8601 */
  timestamp: string;
  chunkId: number | null;
  errors: string[];
  extras: { sources?: unknown[]; hasFeedback?: boolean; contextItemIds?: string[]; gatekeeper?: GatekeeperExtras };
  threadId: number | null;
  agentVersionId: string | null;
  contextItems: ContextItem[];
};

/**
 * GitLab's subscription topics: an event reaches a subscriber whose arguments equal one of its
 * topics exactly (graphql-ruby's rule), e.g. {userId, aiAction} or {userId, aiAction, clientSubscriptionId}.
 */
export type Topic = Readonly<Record<string, string>>;

export type PublishedEvent = { message: ChatMessageEvent; topics: Topic[] };

/** Asks whoever generates the answer for this user and clientSubscriptionId to stop. */
export type CancelSignal = { userId: number; clientSubscriptionId: string; supersededBy: string };

export function topicMatches(topic: Topic, args: Topic): boolean {
  const keys = Object.keys(topic);
  return keys.length === Object.keys(args).length && keys.every((key) => args[key] === topic[key]);
}

export type ChatEventBusOptions = {
  /** For PUBLISH. */
  redis: Redis;
  /** A connection in subscriber mode is dedicated to it: this makes a new one, once. */
  createSubscriber: () => Redis;
  /** Redis key prefix of this instance. */
  prefix: string;
  logger: Logger;
};

type Listener<T> = (payload: T) => void;

/**
 * Chat events over Redis pub/sub, so that every API replica delivers what any worker publishes.
 * One subscriber connection per process, fanned out to in-process listeners by channel.
 */
export class ChatEventBus {
  private subscriber: Redis | null = null;
  private readonly listeners = new Map<string, Set<Listener<unknown>>>();

  constructor(private readonly options: ChatEventBusOptions) {}

  private userChannel(userId: number): string {
    return `${this.options.prefix}:chat-events:${userId}`;
  }

  private get cancelChannel(): string {
    return `${this.options.prefix}:chat-cancel`;
  }

  async publish(userId: number, event: PublishedEvent): Promise<void> {
    await this.options.redis.publish(this.userChannel(userId), JSON.stringify(event));
  }

  async publishCancel(signal: CancelSignal): Promise<void> {
    await this.options.redis.publish(this.cancelChannel, JSON.stringify(signal));
  }

  /** Resolves once Redis confirmed the subscription, so no event published after it is missed. */
  subscribe(userId: number, listener: Listener<PublishedEvent>): Promise<() => Promise<void>> {
    return this.listen(this.userChannel(userId), listener as Listener<unknown>);
  }

  onCancel(listener: Listener<CancelSignal>): Promise<() => Promise<void>> {
    return this.listen(this.cancelChannel, listener as Listener<unknown>);
  }

  /** Publishes on a named channel of this instance (e.g. `code-suggestions:<sessionId>`), for other features' events. */
  async publishOn(name: string, payload: unknown): Promise<void> {
    await this.options.redis.publish(`${this.options.prefix}:events:${name}`, JSON.stringify(payload));
  }

  /** Listens on a channel publishOn writes to; resolves once Redis confirmed the subscription. */
  listenOn<T>(name: string, listener: Listener<T>): Promise<() => Promise<void>> {
    return this.listen(`${this.options.prefix}:events:${name}`, listener as Listener<unknown>);
  }

  private async listen(channel: string, listener: Listener<unknown>): Promise<() => Promise<void>> {
    const subscriber = this.ensureSubscriber();
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await subscriber.subscribe(channel);
    }
    set.add(listener);
    return async () => {
      const current = this.listeners.get(channel);
      if (!current?.delete(listener) || current.size > 0) return;
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
        this.options.logger.warn({ event: 'chat_event_unreadable', channel, err: error }, 'unreadable chat event');
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

/** An async iterator over a user's chat events that match the subscriber's topic; `return()` unsubscribes. */
export function chatEventIterator(bus: ChatEventBus, userId: number, args: Topic): Promise<AsyncIterableIterator<ChatMessageEvent>> {
  return listenerIterator<ChatMessageEvent>((push) =>
    bus.subscribe(userId, (event) => {
      if (event.topics.some((topic) => topicMatches(topic, args))) push(event.message);
    }),
  );
}

/**
 * Turns a listener subscription into the async iterator GraphQL subscriptions return: values are
 * queued until read; `return()` (the client went away) unsubscribes.
 */
export async function listenerIterator<T>(listen: (push: (value: T) => void) => Promise<() => Promise<void>>): Promise<AsyncIterableIterator<T>> {
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
