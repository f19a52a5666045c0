import type { RequestHandler } from 'express';
import { requireSafeJson } from '../validation';

/**
 * Refuses a JSON body nested deeper than maxDepth or holding a NUL byte, naming the field, before
 * any route reads it. GraphQL bodies are left to guardOperation, which names the variable instead.
 */
export function safeJsonBody(maxDepth: number): RequestHandler {
  return (request, _response, next) => {
    if (request.body === undefined || request.originalUrl.split('?')[0] === '/api/graphql') return next();
    requireSafeJson(request.body, '', maxDepth);
    next();
  };
}
