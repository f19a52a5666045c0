import type { RequestHandler } from 'express';
import { requireSafeJson } from '../validation';

/**
 * Refuses a query string or JSON body holding a NUL byte (PostgreSQL refuses them in text) or a
 * body nested deeper than maxDepth, naming the field, before any route reads them. GraphQL is left
 * to guardOperation, which names the variable or argument instead.
 */
export function safeJsonBody(maxDepth: number): RequestHandler {
  return (request, _response, next) => {
    if (request.originalUrl.split('?')[0] === '/api/graphql') return next();
    requireSafeJson(request.query, '', maxDepth);
    if (request.body !== undefined) requireSafeJson(request.body, '', maxDepth);
    next();
  };
}
