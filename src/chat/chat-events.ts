import { listenerIterator, type EventBus } from '../events/event-bus';
import { chatCancelChannel, chatEventsChannel } from '../redis-keys';
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
  /** The content as HTML when it was rendered as stored, by today's renderer (answers); otherwise rendered when read. */
  contentHtml?: string;
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
  events: EventBus;
  /** Redis key prefix of this instance. */
  prefix: string;
};

/** Chat's channels on the event bus: a user's chat events, and cancel signals for superseded answers. */
export class ChatEventBus {
  constructor(private readonly options: ChatEventBusOptions) {}

  async publish(userId: number, event: PublishedEvent): Promise<void> {
    await this.options.events.publish(chatEventsChannel(this.options.prefix, userId), event);
  }

  async publishCancel(signal: CancelSignal): Promise<void> {
    await this.options.events.publish(chatCancelChannel(this.options.prefix), signal);
  }

  /** Resolves once Redis confirmed the subscription, so no event published after it is missed. */
  subscribe(userId: number, listener: (event: PublishedEvent) => void): Promise<() => Promise<void>> {
    return this.options.events.listen(chatEventsChannel(this.options.prefix, userId), listener);
  }

  onCancel(listener: (signal: CancelSignal) => void): Promise<() => Promise<void>> {
    return this.options.events.listen(chatCancelChannel(this.options.prefix), listener);
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
