import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../logger';
import { isGraphQLRequest, sendError } from './http-errors';
import { locals } from './locals';
import { rateLimitPrefix } from '../redis-keys';

export type RateLimitOptions = {
  redis: Redis;
  /** Redis key prefix of this instance. */
  keyPrefix: string;
  /** Requests per user (or per address when anonymous) per minute. */
  pointsPerMinute: number;
  logger: Logger;
};

export const RATE_LIMIT_MESSAGE = 'This endpoint has been requested too many times. Try again later.';

/** A per-user limit kept in Redis, so that every API process shares it. */
export function rateLimitMiddleware(options: RateLimitOptions): RequestHandler {
  const limiter = new RateLimiterRedis({
    storeClient: options.redis,
    keyPrefix: rateLimitPrefix(options.keyPrefix),
    points: options.pointsPerMinute,
    duration: 60,
  });
  return async (request, response, next) => {
    const viewer = locals(response).viewer;
    const key = viewer ? `user:${viewer.user.id}` : `ip:${request.ip}`;
    try {
      const result = await limiter.consume(key);
      response.setHeader('RateLimit-Limit', options.pointsPerMinute);
      response.setHeader('RateLimit-Remaining', result.remainingPoints);
      next();
    } catch (error) {
      if (error instanceof RateLimiterRes) {
        response.setHeader('Retry-After', Math.max(1, Math.ceil(error.msBeforeNext / 1000)));
        return sendError(request, response, 429, isGraphQLRequest(request) ? RATE_LIMIT_MESSAGE : '429 Too Many Requests');
      }
      // Redis trouble must not take the API down with it: let the request through and say so.
      options.logger.warn({ event: 'rate_limit_unavailable', requestId: locals(response).requestId, err: error }, 'rate limiter unavailable');
      next();
    }
  };
}
