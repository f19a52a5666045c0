import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Viewer } from '../auth/viewer';
import type { Logger } from '../logger';
import { isGraphQLRequest, sendError } from './http-errors';
import { locals } from './locals';
import { rateLimitPrefix } from '../redis-keys';

export type RateLimitOptions = {
  redis: Redis;
  /** Redis key prefix of this instance. */
  keyPrefix: string;
  /** Requests per key per minute. */
  pointsPerMinute: number;
  logger: Logger;
  /** Which budget: every limiter with the same name shares it, whatever the transport. Default `rate` (the API's). */
  name?: string;
};

export const RATE_LIMIT_MESSAGE = 'This endpoint has been requested too many times. Try again later.';

export type RateDecision = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

export type RequestLimiter = {
  readonly pointsPerMinute: number;
  /** Takes one request from the key's budget. Redis trouble lets the request through (and is logged). */
  consume(key: string): Promise<RateDecision>;
};

/** The API's budget key: the user, or the address when anonymous. HTTP, graphql-ws and ActionCable all use it. */
export function rateLimitKey(viewer: Viewer | null, address: string | undefined): string {
  return viewer ? `user:${viewer.user.id}` : `ip:${address ?? 'unknown'}`;
}

/** A per-key limit kept in Redis, so that every process and every transport shares it. */
export function createRequestLimiter(options: RateLimitOptions): RequestLimiter {
  const limiter = new RateLimiterRedis({
    storeClient: options.redis,
    keyPrefix: rateLimitPrefix(options.keyPrefix, options.name),
    points: options.pointsPerMinute,
    duration: 60,
  });
  return {
    pointsPerMinute: options.pointsPerMinute,
    consume: async (key) => {
      try {
        const result = await limiter.consume(key);
        return { allowed: true, remaining: result.remainingPoints };
      } catch (error) {
        if (error instanceof RateLimiterRes)
          return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(error.msBeforeNext / 1000)) };
        // Redis trouble must not take the API down with it: let the request through and say so.
        options.logger.warn({ event: 'rate_limit_unavailable', limiter: options.name ?? 'rate', err: error }, 'rate limiter unavailable');
        return { allowed: true, remaining: options.pointsPerMinute };
      }
    },
  };
}

/** HTTP's side of the limit: per user (or per address when anonymous, or per address always with `byAddress`). */
export function rateLimitMiddleware(options: RateLimitOptions & { byAddress?: boolean }): RequestHandler {
  const limiter = createRequestLimiter(options);
  return async (request, response, next) => {
    const key = rateLimitKey(options.byAddress ? null : locals(response).viewer, request.ip);
    const decision = await limiter.consume(key);
    if (decision.allowed) {
      response.setHeader('RateLimit-Limit', options.pointsPerMinute);
      response.setHeader('RateLimit-Remaining', decision.remaining);
      return next();
    }
    response.setHeader('Retry-After', decision.retryAfterSeconds);
    return sendError(request, response, 429, isGraphQLRequest(request) ? RATE_LIMIT_MESSAGE : '429 Too Many Requests');
  };
}
