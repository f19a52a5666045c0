import { createHash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'glpat-';
export const TOKEN_SCOPES = ['api', 'read_api', 'ai_features', 'mcp'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** A new personal access token: `glpat-` and 20 URL-safe random characters (120 bits). */
export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(15).toString('base64url');
}

/** What is stored: only the SHA-256 hex digest, never the token. */
export function digestToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function isTokenScope(value: string): value is TokenScope {
  return (TOKEN_SCOPES as readonly string[]).includes(value);
}

/** The token a request carries, GitLab's two ways: `Authorization: Bearer <t>` or `PRIVATE-TOKEN: <t>`. */
export function tokenFromHeaders(headers: Record<string, string | string[] | undefined>): string | null {
  const privateToken = headerValue(headers['private-token']);
  if (privateToken) return privateToken.trim();
  const authorization = headerValue(headers.authorization);
  if (!authorization) return null;
  const value = authorization.trim();
  // "Bearer" with nothing after it (a playground's empty template) is no token, not a wrong one.
  if (/^Bearer$/i.test(value)) return null;
  const match = /^Bearer\s+(.+)$/i.exec(value);
  return match ? match[1].trim() : value || null;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
