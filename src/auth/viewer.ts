import { TOKEN_SCOPES, type TokenScope } from './tokens';

/** The authenticated caller of a request: a user and the token they used. */
export type Viewer = {
  user: { id: number; username: string; name: string; email: string; admin: boolean };
  token: { id: number; scopes: readonly TokenScope[] };
};

/** Where a token is used: the REST/GraphQL/WebSocket API, the MCP server at /api/v4/mcp, or OAuth's token info (any scope). */
export type TokenSurface = 'api' | 'mcp' | 'mcp_read' | 'token_info';

/**
 * The scopes that admit a token to each surface, as GitLab's: `mcp` opens only the MCP server
 * (as `api` and `read_api` also do); it reads nothing through REST or GraphQL.
 */
export const SURFACE_SCOPES: Record<TokenSurface, readonly TokenScope[]> = {
  api: ['api', 'read_api', 'ai_features'],
  mcp: ['api', 'read_api', 'mcp'],
  // The few REST reads GitLab opens to mcp tokens too (`allow_mcp_access_read`): semantic search.
  mcp_read: ['api', 'read_api', 'ai_features', 'mcp'],
  token_info: TOKEN_SCOPES,
};

/** GitLab: `api` allows everything; `ai_features` allows the AI endpoints; `read_api` only reads; `mcp` only MCP. */
export function hasScope(viewer: Viewer, ...accepted: TokenScope[]): boolean {
  return viewer.token.scopes.some((scope) => accepted.includes(scope));
}
