import { toGlobalId } from '../global-id';
import type { Topic } from './chat-events';

export type TopicSource = {
  userId: number;
  clientSubscriptionId: string | null;
  /** The message's resource as a global id, when it has one. */
  resourceId: string | null;
  agentVersionId: string | null;
};

/**
 * The topics GitLab triggers a chat message on (GraphqlTriggers.ai_completion_response): one with
 * aiAction, and the legacy one with resourceId instead. Assistant messages also carry the
 * clientSubscriptionId (the stream topic); a final answer goes to both the stream topic and the
 * plain one. The user's own prompt never goes to a clientSubscriptionId topic.
 */
export function topicsFor(source: TopicSource, kind: 'user-echo' | 'chunk' | 'final'): Topic[] {
  const base: Record<string, string> = { userId: toGlobalId('User', source.userId) };
  if (source.agentVersionId) base.agentVersionId = source.agentVersionId;
  const withAction = { ...base, aiAction: 'chat' };
  const legacy = source.resourceId ? { ...base, resourceId: source.resourceId } : { ...base };
  const plain = [withAction, legacy];
  const stream = source.clientSubscriptionId
    ? plain.map((topic) => ({ ...topic, clientSubscriptionId: source.clientSubscriptionId! }))
    : [];
  if (kind === 'user-echo') return plain;
  if (kind === 'chunk') return stream;
  return [...stream, ...plain];
}

/** The topic a subscriber listens on: its non-null arguments, normalized like the triggers. */
export function subscriberTopic(args: {
  userId?: string | null;
  resourceId?: string | null;
  agentVersionId?: string | null;
  clientSubscriptionId?: string | null;
  aiAction?: string | null;
}): Topic {
  const topic: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value !== null && value !== undefined) topic[key] = String(value);
  }
  return topic;
}
