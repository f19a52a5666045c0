import type { RequestHandler } from 'express';
import { authenticateToken } from '../auth/authenticate';
import { tokenFromHeaders } from '../auth/tokens';
import type { PrismaClient } from '../db/prisma';
import { isAppError } from '../errors';
import { sendAppError } from './http-errors';
import { locals } from './locals';

/** No token: anonymous. A bad token (wrong, expired, revoked, blocked user): 401, never anonymous. */
export function authenticateMiddleware(prisma: PrismaClient): RequestHandler {
  return async (request, response, next) => {
    const token = tokenFromHeaders(request.headers);
    if (!token) return next();
    try {
      locals(response).viewer = await authenticateToken(prisma, token);
      next();
    } catch (error) {
      if (isAppError(error)) return sendAppError(request, response, error);
      next(error);
    }
  };
}
