import type { Request } from 'express';
import type { TokenSurface } from '../auth/viewer';
import { isGraphQLRequest } from './http-errors';

const TOKEN_SELF = /^\/api\/v4\/personal_access_tokens\/self\/?$/;
const CODE_SUGGESTIONS = /^\/api\/v4\/code_suggestions(\/|$)/;
const SEMANTIC_SEARCH = /^\/api\/v4\/projects\/[^/]+(\/-)?\/search\/semantic\/?$/;
const VERSION = /^\/api\/v4\/(version|metadata)\/?$/;

/**
 * Which scopes a request under /api takes (SURFACE_SCOPES), as GitLab's endpoints declare them
 * with allow_access_with_scope: the one place that says so for REST.
 * - GraphQL: every reading scope; mutations are checked per operation.
 * - `personal_access_tokens/self`: any scope (a token may always read itself).
 * - code suggestions: `api` or `ai_features` (and `read_api` on a GET, which none of them is).
 * - `version` (and GitLab's `metadata`) on GET and HEAD: `ai_features` too (allow_access_with_scope [:read_user, :ai_features]).
 * - semantic search's GET: `api`, `read_api` or `mcp` (allow_mcp_access_read).
 * - everything else: `api`, and `read_api` on GET and HEAD. `glab duo ask`, `usage_data/track_event`,
 *   the raw file read and `/user` allow nothing more.
 */
export function restSurface(request: Request): TokenSurface {
  const path = request.originalUrl.split('?')[0].toLowerCase();
  const reads = request.method === 'GET' || request.method === 'HEAD';
  if (isGraphQLRequest(request)) return 'api';
  if (reads && VERSION.test(path)) return 'api';
  if (TOKEN_SELF.test(path)) return 'token_info';
  if (CODE_SUGGESTIONS.test(path)) return reads ? 'api' : 'rest_ai';
  if (reads && SEMANTIC_SEARCH.test(path)) return 'mcp_read';
  return reads ? 'rest_read' : 'rest_write';
}
