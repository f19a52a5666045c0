import { GraphQLError } from 'graphql';
import { authenticateToken } from '../auth/authenticate';
import type { Viewer } from '../auth/viewer';
import { isAppError } from '../errors';
import type { OperationLimits } from '../graphql/operation-guard';
import type { Services } from '../services';
import { createRequestLimiter, RATE_LIMIT_MESSAGE, rateLimitKey, type RequestLimiter } from '../auth/rate-limits';

/**
 * What graphql-ws and ActionCable check besides the operation itself (operation-guard.ts): the
 * connection's token is still good (re-checked on every operation and every reauthIntervalMs),
 * the caller is within the API's rate limit (the same Redis budget as HTTP), and holds no more
 * than maxSubscriptionsPerUser open subscriptions in this process.
 */
export type SocketGuard = {
  limits: OperationLimits;
  /** graphql-js parse option: documents over this many tokens are refused before validation. */
  maxTokens: number;
  maxMessageBytes: number;
  reauthIntervalMs: number;
  /** The viewer behind the token now, or null when it is no longer valid (revoked, expired, blocked user). */
  reauthenticate(token: string): Promise<Viewer | null>;
  /** One request from the caller's rate budget; an error to send when it is spent. */
  admit(viewer: Viewer | null, address: string | undefined): Promise<GraphQLError | null>;
  /** Reserves a subscription slot for the caller; false when all are taken. */
  acquireSlot(viewer: Viewer | null, address: string | undefined): string | null;
  releaseSlot(slot: string): void;
};

export const TOO_MANY_SUBSCRIPTIONS = 'Too many open subscriptions: close some before opening more';

export function createSocketGuard(services: Services): SocketGuard {
  const { config } = services;
  const limiter: RequestLimiter = createRequestLimiter({
    redis: services.redis,
    keyPrefix: config.redisPrefix,
    points: config.rateLimitPerMinute,
    logger: services.logger,
  });
  const open = new Map<string, number>();
  return {
    limits: { maxComplexity: config.graphqlMaxComplexity, maxJsonDepth: config.maxJsonDepth, maxDepth: config.graphqlMaxDepth },
    maxTokens: config.graphqlMaxTokens,
    maxMessageBytes: config.wsMaxMessageBytes,
    reauthIntervalMs: config.socketReauthIntervalMs,
    reauthenticate: async (token) => {
      try {
        return await authenticateToken(services.prisma, token);
      } catch (error) {
        if (isAppError(error) && error.code === 'UNAUTHENTICATED') return null;
        throw error;
      }
    },
    admit: async (viewer, address) => {
      const decision = await limiter.consume(rateLimitKey(viewer, address));
      if (decision.allowed) return null;
      return new GraphQLError(RATE_LIMIT_MESSAGE, { extensions: { code: 'RATE_LIMITED', retryAfter: decision.retryAfterSeconds } });
    },
    acquireSlot: (viewer, address) => {
      const key = rateLimitKey(viewer, address);
      const count = open.get(key) ?? 0;
      if (count >= config.maxSubscriptionsPerUser) return null;
      open.set(key, count + 1);
      return key;
    },
    releaseSlot: (key) => {
      const count = (open.get(key) ?? 0) - 1;
      if (count > 0) open.set(key, count);
      else open.delete(key);
    },
  };
}
