import type { Request, RequestHandler, Response } from 'express';
import {
  createRequestLimiter,
  RATE_LIMIT_MESSAGE,
  rateLimitKey,
  type RequestLimiter,
  type RequestLimiterOptions,
} from '../auth/rate-limits';
import { isGraphQLRequest, sendError } from './http-errors';
import { locals } from './locals';

/**
 * A request whose token is wrong (unknown, expired, revoked, a blocked user's) is, to GitLab's
 * Rack::Attack, an unauthenticated one: it spends its address's anonymous budget, so guessing
 * tokens is limited like any anonymous request. Resolves to the seconds to wait once that budget
 * is spent (answer 429, not 401), else null. Every transport that takes a token calls it.
 */
export async function wrongTokenRetryAfter(limiter: RequestLimiter, address: string | undefined): Promise<number | null> {
  const decision = await limiter.consume(rateLimitKey(null, address));
  return decision.allowed ? null : decision.retryAfterSeconds;
}

/** The 429 of the API's rate limit, on the route's clients' terms (GraphQL's errors or GitLab's REST body). */
export function sendRateLimited(request: Request, response: Response, retryAfterSeconds: number): void {
  response.setHeader('Retry-After', retryAfterSeconds);
  sendError(request, response, 429, isGraphQLRequest(request) ? RATE_LIMIT_MESSAGE : '429 Too Many Requests');
}

/**
 * HTTP's side of the limit: per user (or per address when anonymous, or per address always with `byAddress`).
 * `cost`: how many requests one HTTP request counts for (default 1); none is taken when it is 0.
 */
export function rateLimitMiddleware(
  options: RequestLimiterOptions & { byAddress?: boolean; cost?: (request: Request) => number },
): RequestHandler {
  const limiter = createRequestLimiter(options);
  return async (request, response, next) => {
    const points = options.cost?.(request) ?? 1;
    if (points === 0) return next();
    const key = rateLimitKey(options.byAddress ? null : locals(response).viewer, request.ip);
    const decision = await limiter.consume(key, points);
    if (decision.allowed) {
      response.setHeader('RateLimit-Limit', options.points);
      response.setHeader('RateLimit-Remaining', decision.remaining);
      return next();
    }
    return sendRateLimited(request, response, decision.retryAfterSeconds);
  };
}
