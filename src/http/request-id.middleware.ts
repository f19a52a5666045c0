import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { locals } from './locals';

/**
 * Takes a sane incoming X-Request-Id or makes one, and echoes it, so logs and clients can meet;
 * notes when the request arrived (the first middleware to set locals).
 */
export function requestIdMiddleware(): RequestHandler {
  return (request, response, next) => {
    locals(response).receivedAt = performance.now();
    const incoming = request.get('x-request-id');
    const requestId = incoming && /^[\w-]{8,128}$/.test(incoming) ? incoming : randomUUID();
    locals(response).requestId = requestId;
    locals(response).viewer = null;
    response.setHeader('X-Request-Id', requestId);
    next();
  };
}
