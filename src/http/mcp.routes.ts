import express, { Router, type RequestHandler } from 'express';
import { authenticateToken, InsufficientScopeError } from '../auth/authenticate';
import { tokenFromHeaders } from '../auth/tokens';
import { isAppError } from '../errors';
import type { Services } from '../services';
import { sendInsufficientScope } from './http-errors';
import { locals } from './locals';
import { GITLAB_VERSION, publicUrl } from './rest-v4.routes';

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
function authenticateMcp(services: Services): RequestHandler {
  return async (request, response, next) => {
    const token = tokenFromHeaders(request.headers);
    if (!token) return void response.status(401).set('WWW-Authenticate', 'Bearer realm="GitLab"').json({ message: '401 Unauthorized' });
    try {
      locals(response).viewer = await authenticateToken(services.prisma, token, { surface: 'mcp' });
      next();
    } catch (error) {
      if (isAppError(error) && error.code === 'UNAUTHENTICATED') {
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

/**
 * GitLab's MCP server (18.6+) at /api/v4/mcp: Streamable HTTP in stateless JSON mode, so any API
 * process can answer any request. GET (a server-to-client stream) and DELETE (sessions) are not
 * offered, as in stateless servers: 405.
 */
export function mcpRoutes(services: Services, rateLimit: RequestHandler): Router {
  const router = Router();
  router.use(authenticateMcp(services), rateLimit);
  router.post('/', express.json({ limit: services.config.maxBodyBytes }), async (request, response) => {
    const { createMcpServer, StreamableHTTPServerTransport } = loadMcp();
    const server = createMcpServer({
      services,
      viewer: locals(response).viewer!,
      externalUrl: publicUrl(services.config, request),
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
  return router;
}
