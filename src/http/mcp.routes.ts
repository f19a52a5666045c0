import express, { Router, type ErrorRequestHandler, type Request, type RequestHandler } from 'express';
import { authenticateToken, InsufficientScopeError } from '../auth/authenticate';
import { tokenFromHeaders } from '../auth/tokens';
import { isAppError } from '../errors';
import { describeUnsafeJson, findUnsafeJson } from '../validation';
import type { Services } from '../services';
import { sendInsufficientScope } from './http-errors';
import { sendRateLimited, wrongTokenRetryAfter } from './rate-limit.middleware';
import type { RequestLimiter } from '../auth/rate-limits';
import { locals } from './locals';
import { GITLAB_VERSION, webLinkBase } from './rest-v4.routes';

export const MCP_PATH = '/api/v4/mcp';

type McpModules = {
  createMcpServer: typeof import('../mcp/mcp-server').createMcpServer;
  StreamableHTTPServerTransport: typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js').StreamableHTTPServerTransport;
};
let mcpModules: McpModules | null = null;

/** The MCP SDK (with its JSON Schema tooling) takes about a second to load: only when the first MCP request comes, not at every start. */
function loadMcp(): McpModules {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use, see above */
  mcpModules ??= {
    createMcpServer: (require('../mcp/mcp-server') as typeof import('../mcp/mcp-server')).createMcpServer,
    StreamableHTTPServerTransport: (
      require('@modelcontextprotocol/sdk/server/streamableHttp.js') as typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')
    ).StreamableHTTPServerTransport,
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
  return mcpModules;
}

/** Every MCP request needs a token with the api, read_api or mcp scope; anything else is 401 (or 403 for a token without those scopes). */
function authenticateMcp(services: Services, wrongTokens: RequestLimiter): RequestHandler {
  return async (request, response, next) => {
    const token = tokenFromHeaders(request.headers);
    if (!token) return void response.status(401).set('WWW-Authenticate', 'Bearer realm="GitLab"').json({ message: '401 Unauthorized' });
    try {
      locals(response).viewer = await authenticateToken(services.prisma, token, { surface: 'mcp' });
      next();
    } catch (error) {
      if (isAppError(error) && error.code === 'UNAUTHENTICATED') {
        const wait = await wrongTokenRetryAfter(wrongTokens, request.ip);
        if (wait !== null) return sendRateLimited(request, response, wait);
        return void response
          .status(401)
          .set('WWW-Authenticate', 'Bearer realm="GitLab", error="invalid_token"')
          .json({ message: '401 Unauthorized' });
      }
      if (error instanceof InsufficientScopeError) return sendInsufficientScope(response, error.scopes);
      next(error);
    }
  };
}

/** The requests a parsed JSON-RPC batch counts for beyond the one its HTTP request already took: one for each further message. */
export function extraBatchMessages(request: Request): number {
  return Array.isArray(request.body) ? Math.max(0, request.body.length - 1) : 0;
}

/**
 * The rules every stored input follows (no NUL byte or lone surrogate in a string, no nesting past
 * MAX_JSON_DEPTH), as REST's bodies follow them; refused as JSON-RPC's invalid request, naming where.
 */
function safeJsonRpc(maxDepth: number): RequestHandler {
  return (request, response, next) => {
    const unsafe = findUnsafeJson(request.body, { maxDepth });
    if (!unsafe) return next();
    // JSON-RPC answers with the request's id when it can read one (a string or a number).
    const message: unknown = request.body;
    const requestId = message && typeof message === 'object' && !Array.isArray(message) ? (message as { id?: unknown }).id : null;
    const id = typeof requestId === 'string' || typeof requestId === 'number' ? requestId : null;
    response
      .status(400)
      .json({ jsonrpc: '2.0', error: { code: -32600, message: `${unsafe.path || 'body'} ${describeUnsafeJson(unsafe, maxDepth)}` }, id });
  };
}

/**
 * GitLab's MCP server (18.6+) at /api/v4/mcp: Streamable HTTP in stateless JSON mode, so any API
 * process can answer any request. GET (a server-to-client stream) and DELETE (sessions) are not
 * offered, as in stateless servers: 405.
 */
export function mcpRoutes(
  services: Services,
  limits: { rateLimit: RequestHandler; batchRateLimit: RequestHandler; wrongTokens: RequestLimiter },
): Router {
  const { rateLimit } = limits;
  const router = Router();
  // The request is counted before its body is read (a spent budget reads nothing); a batch's further messages after.
  router.use(authenticateMcp(services, limits.wrongTokens), rateLimit);
  const body = [express.json({ limit: services.config.maxBodyBytes }), safeJsonRpc(services.config.maxJsonDepth), limits.batchRateLimit];
  router.post('/', ...body, async (request, response) => {
    const { createMcpServer, StreamableHTTPServerTransport } = loadMcp();
    const server = createMcpServer({
      services,
      viewer: locals(response).viewer!,
      externalUrl: webLinkBase(services.config, request),
      version: GITLAB_VERSION,
      requestId: locals(response).requestId,
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, request.body);
  });
  router.all('/', (_request, response) => {
    response
      .status(405)
      .set('Allow', 'POST')
      .json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
  });
  // A body that is not JSON, or too large, is answered in JSON-RPC's terms (as the SDK answers its own refusals).
  const refuseBody: ErrorRequestHandler = (error: { type?: string; status?: number }, _request, response, next) => {
    if (response.headersSent) return next(error);
    if (error.type === 'entity.parse.failed')
      return void response
        .status(400)
        .json({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not JSON' }, id: null });
    if (error.status === 413)
      return void response.status(413).json({
        jsonrpc: '2.0',
        error: { code: -32600, message: `Invalid Request: the body is over ${services.config.maxBodyBytes} bytes` },
        id: null,
      });
    next(error);
  };
  router.use(refuseBody);
  return router;
}
