import { TOKEN_SCOPES, type TokenScope } from './tokens';

/** The authenticated caller of a request: a user and the token they used. */
export type Viewer = {
  user: { id: number; username: string; name: string; email: string; admin: boolean };
  token: { id: number; scopes: readonly TokenScope[] };
};

/**
 * Where a token is used: GraphQL (over HTTP and WebSockets), a REST endpoint (by the scopes GitLab's
 * endpoint allows: see src/http/rest-scopes.ts), the MCP server at /api/v4/mcp, or a token's own
 * information (any scope).
 */
export type TokenSurface = 'api' | 'rest_read' | 'rest_write' | 'rest_ai' | 'mcp' | 'mcp_read' | 'token_info';

/**
 * The scopes that admit a token to each surface, as GitLab's: every REST endpoint takes `api`, and
 * `read_api` on GET and HEAD; a few AI endpoints take `ai_features` too; `mcp` opens the MCP server
 * (as `api` and `read_api` also do) and semantic search's GET, nothing else of REST or GraphQL.
 */
export const SURFACE_SCOPES: Record<TokenSurface, readonly TokenScope[]> = {
  // GraphQL: every field reads with these; mutations are checked per operation (src/graphql/operation-guard.ts).
  api: ['api', 'read_api', 'ai_features'],
  // REST's GET and HEAD (GitLab's API class: allow_access_with_scope :read_api, if: get? || head?).
  rest_read: ['api', 'read_api'],
  rest_write: ['api'],
  // REST endpoints that allow_access_with_scope :ai_features (code suggestions; all are POSTs).
  rest_ai: ['api', 'ai_features'],
  mcp: ['api', 'read_api', 'mcp'],
  // Semantic search's GET (allow_mcp_access_read).
  mcp_read: ['api', 'read_api', 'mcp'],
  token_info: TOKEN_SCOPES,
};

/** GitLab: `api` allows everything; `ai_features` allows the AI endpoints; `read_api` only reads; `mcp` only MCP. */
export function hasScope(viewer: Viewer, ...accepted: TokenScope[]): boolean {
  return viewer.token.scopes.some((scope) => accepted.includes(scope));
}
