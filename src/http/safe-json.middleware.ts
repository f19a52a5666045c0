import type { RequestHandler } from 'express';
import { requireSafeJson } from '../validation';
import { isGraphQLRequest } from './http-errors';

/**
 * Refuses a query string or JSON body holding a NUL byte (PostgreSQL refuses them in text) or a
 * body nested deeper than maxDepth, naming the field, before any route reads them. GraphQL is left
 * to guardOperation, which names the variable or argument instead.
 */
export function safeJsonBody(maxDepth: number): RequestHandler {
  return (request, _response, next) => {
    if (isGraphQLRequest(request)) return next();
    requireSafeJson(request.query, '', maxDepth);
    if (request.body !== undefined) requireSafeJson(request.body, '', maxDepth);
    next();
  };
}
