import type { Request, RequestHandler } from 'express';
import { metrics } from '../metrics/registry';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Where routers are mounted (src/http/app.ts), longest first; requests that matched no route count under theirs. */
const MOUNTS = ['/api/v4/code_suggestions', '/api/v4/webhooks', '/api/graphql', '/api/v4', '/api', '/-'];

const patternCache = new Map<string, RegExp | null>();

/** A route pattern as a regular expression over the raw path; null for patterns with wildcards or optional parts. */
function patternOf(pattern: string): RegExp | null {
  if (!patternCache.has(pattern)) {
    const plain = !/[*{}()?+]/.test(pattern);
    const source = pattern.replace(/[.\\^$|[\]]/g, '\\$&').replace(/:\w+/g, '[^/]+');
    patternCache.set(pattern, plain ? new RegExp(`^${source}/?$`) : null);
  }
  return patternCache.get(pattern)!;
}

/**
 * The route pattern that answered (`/api/v4/projects/:id/search/semantic`), never the raw path.
 * When the response ends after the router has left (an error handler answered), Express has
 * reset `baseUrl`, so the mount is found again among the known ones.
 */
export function routeLabel(request: Request): string {
  const path = request.originalUrl.split('?')[0] ?? '';
  const declared = (request.route as { path?: unknown } | undefined)?.path;
  // A route declared with several paths (an alias) is labelled by its first, the canonical one.
  const route = Array.isArray(declared) ? (declared[0] as unknown) : declared;
  if (typeof route === 'string') {
    if (request.baseUrl && MOUNTS.includes(request.baseUrl)) return `${request.baseUrl}${route}`;
    const mount = ['', ...MOUNTS].find((prefix) => patternOf(`${prefix}${route}`)?.test(path));
    return mount === undefined ? route : `${mount}${route}`;
  }
  if (path === '/api/graphql') return path;
  const mount = MOUNTS.find((prefix) => path.startsWith(`${prefix}/`));
  return mount ? `${mount}/*` : 'other';
}

/**
 * Counts and times every HTTP request by method, route pattern and status once its connection is
 * done with it; a client that went away before the response ended counts as status 499.
 */
export function requestMetricsMiddleware(): RequestHandler {
  return (request, response, next) => {
    const started = process.hrtime.bigint();
    response.once('close', () => {
      const status = response.writableFinished ? String(response.statusCode) : '499';
      const labels = { method: METHODS.has(request.method) ? request.method : 'OTHER', route: routeLabel(request), status };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}
