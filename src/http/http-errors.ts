import type { ErrorRequestHandler, Request, Response } from 'express';
import { INSUFFICIENT_SCOPE_MESSAGE } from '../auth/authenticate';
import { isAppError, type AppError } from '../errors';
import type { Logger } from '../logger';
import { refusedUnsent, unavailableMessage } from '../unavailable';
import { locals } from './locals';

const GRAPHQL_CODES: Record<number, string> = {
  400: 'BAD_USER_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  413: 'BAD_USER_INPUT',
  429: 'RATE_LIMITED',
  503: 'SERVICE_UNAVAILABLE',
};

export const GRAPHQL_PATH = '/api/graphql';

/** Whether the request is for GraphQL, wherever the router that handles it is mounted. */
export function isGraphQLRequest(request: Request): boolean {
  // As Express routes it: case-insensitive, a trailing slash allowed.
  return request.originalUrl.split('?')[0].toLowerCase().replace(/\/+$/, '') === GRAPHQL_PATH;
}

/** Sends an error the way the route's clients read one: GraphQL errors on /api/graphql, GitLab's REST shape elsewhere. */
export function sendError(request: Request, response: Response, status: number, message: string, field?: string): void {
  if (isGraphQLRequest(request)) {
    response.status(status).json({
      errors: [{ message, extensions: { code: GRAPHQL_CODES[status] ?? 'INTERNAL_SERVER_ERROR', ...(field ? { field } : {}) } }],
    });
    return;
  }
  if (status === 400 && field) {
    // Grape's shape, as GitLab's REST API answers a bad parameter.
    response.status(status).json({ error: message, field });
    return;
  }
  response.status(status).json({ message });
}

/**
 * GitLab's answer to a valid token without the scope an endpoint takes (APIGuard's
 * InsufficientScopeError): 403, OAuth's error body and header, naming the scopes that would do.
 */
export function sendInsufficientScope(response: Response, scopes: readonly string[]): void {
  const scope = scopes.join(' ');
  response
    .status(403)
    .set(
      'WWW-Authenticate',
      `Bearer realm="GitLab", error="insufficient_scope", error_description="${INSUFFICIENT_SCOPE_MESSAGE}", scope="${scope}"`,
    )
    .json({ error: 'insufficient_scope', error_description: INSUFFICIENT_SCOPE_MESSAGE, scope });
}

export function sendAppError(request: Request, response: Response, error: AppError): void {
  const message =
    error.httpStatus === 401
      ? '401 Unauthorized'
      : error.httpStatus === 404 && !isGraphQLRequest(request)
        ? '404 Not Found'
        : error.userMessage;
  sendError(request, response, error.httpStatus, message, error.field);
}

/**
 * The last handler: body-parser's errors by their status, AppErrors by code, Redis not answering a logged 503,
 * anything else a logged 500.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, request, response, next) => {
    if (response.headersSent) return next(error);
    if (isAppError(error)) return sendAppError(request, response, error);
    const status = (error as { status?: number; type?: string }).status;
    if (status === 413) return sendError(request, response, 413, '413 Request Entity Too Large');
    if (status && status >= 400 && status < 500) {
      const type = (error as { type?: string }).type;
      return sendError(
        request,
        response,
        status,
        type === 'entity.parse.failed' ? 'The request body is not valid JSON' : `${status} Bad Request`,
      );
    }
    // A dependency known to be down was logged once, where it was seen to stop answering.
    if (!refusedUnsent(error))
      logger.error(
        { event: 'http_internal_error', requestId: locals(response).requestId, path: request.path, err: error },
        'request failed',
      );
    const unavailable = unavailableMessage(error);
    if (unavailable) return sendError(request, response, 503, unavailable);
    sendError(request, response, 500, '500 Internal Server Error');
  };
}
