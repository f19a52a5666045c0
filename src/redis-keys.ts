// Every Redis key and channel name this service uses, in one place. Each starts with the
// instance's prefix (REDIS_PREFIX), so instances sharing a Redis never see each other's data.

/** BullMQ's own prefix: queues live under `<prefix>:bull:<queue>`. */
export const bullPrefix = (prefix: string) => `${prefix}:bull`;

/** Prefix of a request rate limiter's keys: the per-user one is `rate`, others name themselves (`webhook-rate`). */
export const rateLimitPrefix = (prefix: string, name = 'rate') => `${prefix}:${name}`;

/** The name (rateLimitPrefix) of the code suggestions endpoint's own per-user limit. */
export const CODE_SUGGESTIONS_RATE_NAME = 'rate:code-suggestions';

/** The name (rateLimitPrefix) of GitLab's `ai_action` limit: aiAction and `glab duo ask`, per user. */
export const AI_ACTION_RATE_NAME = 'rate:ai_action';

/** The request id of the newest chat request on a user's clientSubscriptionId (newer ones supersede it). */
export const activeChatRequestKey = (prefix: string, userId: number, clientSubscriptionId: string) =>
  `${prefix}:chat-active:${userId}:${clientSubscriptionId}`;

/** How many model calls the gatekeeper saved, as a counter. */
export const gatekeeperCallsSavedKey = (prefix: string) => `${prefix}:metrics:gatekeeper_llm_calls_saved`;

/** A push webhook delivery already seen (X-Gitlab-Event-UUID), for deduplication. */
export const webhookEventKey = (prefix: string, projectId: number, eventUuid: string) =>
  `${prefix}:webhook-event:${projectId}:${eventUuid.slice(0, 200)}`;

/** Pub/sub: a user's chat events. */
export const chatEventsChannel = (prefix: string, userId: number) => `${prefix}:chat-events:${userId}`;

/** Pub/sub: requests to stop a chat answer that a newer request superseded. */
export const chatCancelChannel = (prefix: string) => `${prefix}:chat-cancel`;

/** Pub/sub: a continuous code suggestion session's updates. */
export const suggestionSessionChannel = (prefix: string, sessionId: string) => `${prefix}:events:code-suggestions:${sessionId}`;

/** Pub/sub: an index run made a new snapshot of a ref the one search reads (src/search/keyword-warm-up.ts). */
export const snapshotActivatedChannel = (prefix: string) => `${prefix}:events:code-index-activated`;
