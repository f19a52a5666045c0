import type { Request, RequestHandler } from 'express';
import type { TokenSurface } from '../auth/viewer';
import { authenticateToken, InsufficientScopeError } from '../auth/authenticate';
import { tokenFromHeaders } from '../auth/tokens';
import type { PrismaClient } from '../db/prisma';
import { isAppError } from '../errors';
import { isGraphQLRequest, sendAppError, sendInsufficientScope } from './http-errors';
import { locals } from './locals';
import { sendRateLimited, wrongTokenRetryAfter } from './rate-limit.middleware';
import type { RequestLimiter } from '../auth/rate-limits';

/**
 * No token: anonymous. A bad token (wrong, expired, revoked, blocked user): 401, never anonymous; it spends the
 * address's anonymous budget of `wrongTokens` (429 once spent).
 */
export function authenticateMiddleware(
  prisma: PrismaClient,
  surfaceOf: (request: Request) => TokenSurface = () => 'api',
  wrongTokens?: RequestLimiter,
): RequestHandler {
  return async (request, response, next) => {
    const token = tokenFromHeaders(request.headers);
    if (!token) return next();
    try {
      locals(response).viewer = await authenticateToken(prisma, token, { surface: surfaceOf(request) });
      next();
    } catch (error) {
      if (wrongTokens && isAppError(error) && error.code === 'UNAUTHENTICATED') {
        const wait = await wrongTokenRetryAfter(wrongTokens, request.ip);
        if (wait !== null) return sendRateLimited(request, response, wait);
      }
      // REST answers a missing scope as GitLab's API does; GraphQL with its errors.
      if (error instanceof InsufficientScopeError && !isGraphQLRequest(request)) return sendInsufficientScope(response, error.scopes);
      if (isAppError(error)) return sendAppError(request, response, error);
      next(error);
    }
  };
}
