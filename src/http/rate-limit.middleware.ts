import type { RequestHandler } from 'express';
import { createRequestLimiter, RATE_LIMIT_MESSAGE, rateLimitKey, type RequestLimiterOptions } from '../auth/rate-limits';
import { isGraphQLRequest, sendError } from './http-errors';
import { locals } from './locals';

/** HTTP's side of the limit: per user (or per address when anonymous, or per address always with `byAddress`). */
export function rateLimitMiddleware(options: RequestLimiterOptions & { byAddress?: boolean }): RequestHandler {
  const limiter = createRequestLimiter(options);
  return async (request, response, next) => {
    const key = rateLimitKey(options.byAddress ? null : locals(response).viewer, request.ip);
    const decision = await limiter.consume(key);
    if (decision.allowed) {
      response.setHeader('RateLimit-Limit', options.points);
      response.setHeader('RateLimit-Remaining', decision.remaining);
      return next();
    }
    response.setHeader('Retry-After', decision.retryAfterSeconds);
    return sendError(request, response, 429, isGraphQLRequest(request) ? RATE_LIMIT_MESSAGE : '429 Too Many Requests');
  };
}
