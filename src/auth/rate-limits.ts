import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import { AI_ACTION_RATE_NAME, CODE_SUGGESTIONS_RATE_NAME, rateLimitPrefix } from '../redis-keys';
import { refusedUnsent } from '../unavailable';
import type { Viewer } from './viewer';

/** GitLab's words when a limit is reached, on every transport. */
export const RATE_LIMIT_MESSAGE = 'This endpoint has been requested too many times. Try again later.';

export type RequestLimiterOptions = {
  redis: Redis;
  /** Redis key prefix of this instance. */
  keyPrefix: string;
  /** Requests per key per period. */
  points: number;
  /** The period, in seconds. Default 60. */
  periodSeconds?: number;
  logger: Logger;
  /** Which budget: every limiter with the same name shares it, whatever the transport. Default `rate` (the API's). */
  name?: string;
};

export type RateDecision = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

export type RequestLimiter = {
  readonly points: number;
  /** Takes `points` (default one request) from the key's budget. Redis trouble lets the request through (and is logged). */
  consume(key: string, points?: number): Promise<RateDecision>;
};

/** The API's budget key: the user, or the address when anonymous. HTTP, graphql-ws and ActionCable all use it. */
export function rateLimitKey(viewer: Viewer | null, address: string | undefined): string {
  return viewer ? userRateLimitKey(viewer.user.id) : `ip:${address ?? 'unknown'}`;
}

/** A user's budget key, for work that runs after the request that asked for it (a session's generation). */
export const userRateLimitKey = (userId: number) => `user:${userId}`;

/** A per-key limit kept in Redis, so that every process and every transport shares it. */
export function createRequestLimiter(options: RequestLimiterOptions): RequestLimiter {
  const limiter = new RateLimiterRedis({
    storeClient: options.redis,
    keyPrefix: rateLimitPrefix(options.keyPrefix, options.name),
    points: options.points,
    duration: options.periodSeconds ?? 60,
  });
  return {
    points: options.points,
    consume: async (key, points = 1) => {
      try {
        const result = await limiter.consume(key, points);
        return { allowed: true, remaining: result.remainingPoints };
      } catch (error) {
        if (error instanceof RateLimiterRes)
          return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(error.msBeforeNext / 1000)) };
        // Redis trouble must not take the API down with it: let the request through and say so (once, not per
        // request, while the connection refuses commands unsent: it logged redis_not_answering).
        if (!refusedUnsent(error))
          options.logger.warn({ event: 'rate_limit_unavailable', limiter: options.name ?? 'rate', err: error }, 'rate limiter unavailable');
        return { allowed: true, remaining: options.points };
      }
    },
  };
}

/** GitLab's `ai_action` limit (its `ai_action_api_rate_limit` setting): per user, over 8 hours. */
export const AI_ACTION_PERIOD_SECONDS = 8 * 60 * 60;

export function createAiActionLimiter(options: Omit<RequestLimiterOptions, 'periodSeconds' | 'name'>): RequestLimiter {
  return createRequestLimiter({ ...options, periodSeconds: AI_ACTION_PERIOD_SECONDS, name: AI_ACTION_RATE_NAME });
}

/**
 * Takes one of the user's AI actions (aiAction, `glab duo ask`), as GitLab checks its `ai_action`
 * limit before anything else; refused with RATE_LIMITED and GitLab's message once they are spent.
 */
export async function takeAiAction(limiter: RequestLimiter, viewer: Viewer): Promise<void> {
  const decision = await limiter.consume(rateLimitKey(viewer, undefined));
  if (!decision.allowed) {
    throw new AppError({
      code: 'RATE_LIMITED',
      userMessage: RATE_LIMIT_MESSAGE,
      internalMessage: `user ${viewer.user.id} has used up their AI actions (retry after ${decision.retryAfterSeconds} s)`,
    });
  }
}

/**
 * GitLab's `code_suggestions_api_endpoint` limit (CODE_SUGGESTIONS_RATE_LIMIT_PER_MINUTE per user a
 * minute), one budget for everything that starts a code generation: a request to
 * /code_suggestions/completions (and its sibling endpoints, as GitLab counts them) and each
 * generation a continuous suggestions session starts.
 */
export function createCodeSuggestionsLimiter(options: Omit<RequestLimiterOptions, 'periodSeconds' | 'name'>): RequestLimiter {
  return createRequestLimiter({ ...options, periodSeconds: 60, name: CODE_SUGGESTIONS_RATE_NAME });
}
