import { AppError, unauthenticated } from '../errors';
import type { PrismaClient } from '../db/prisma';
import { gitLabConnection } from '../gitlab/gitlab-connection';
import { authenticateWithGitLab } from '../gitlab/gitlab-identity';
import { authCaches, type TtlCache } from './auth-cache';
import { digestToken, isTokenScope, type TokenScope } from './tokens';
import { hasScope, SURFACE_SCOPES, type TokenSurface, type Viewer } from './viewer';

export type AuthenticateOptions = {
  /** Default: now. */
  now?: Date;
  /** The surface the token is used on; a token without a scope for it gets 403 insufficient_scope. Default 'api'. */
  surface?: TokenSurface;
};

/** GitLab's words for a valid token that lacks the scope (OAuth's insufficient_scope). */
export const INSUFFICIENT_SCOPE_MESSAGE = 'The request requires higher privileges than provided by the access token.';

/** A valid token without any scope the surface takes: 403 insufficient_scope, naming the scopes that would do. */
export class InsufficientScopeError extends AppError {
  constructor(
    readonly scopes: readonly TokenScope[],
    internalMessage: string,
  ) {
    super({ code: 'FORBIDDEN', userMessage: INSUFFICIENT_SCOPE_MESSAGE, internalMessage });
    this.name = 'InsufficientScopeError';
  }
}

// GitLab also writes last_used_at at most every 10 minutes, to keep reads from becoming writes.
const LAST_USED_WRITE_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Finds the user behind a token: in the database, or on GitLab when the service is connected to one
 * (src/gitlab/gitlab-identity.ts). Wrong, expired and revoked tokens and blocked users are all the
 * same 401, so that a caller learns nothing about which one it was. Every transport (REST, GraphQL
 * over HTTP, graphql-ws, ActionCable, MCP) authenticates here, and sockets re-check here.
 */
export async function authenticateToken(prisma: PrismaClient, token: string, options: AuthenticateOptions = {}): Promise<Viewer> {
  const now = options.now ?? new Date();
  const gitlab = gitLabConnection(prisma);
  const viewer = gitlab ? await authenticateWithGitLab(prisma, gitlab, token, now) : await authenticateLocally(prisma, token, now);
  const surface = options.surface ?? 'api';
  if (!hasScope(viewer, ...SURFACE_SCOPES[surface])) {
    throw new InsufficientScopeError(SURFACE_SCOPES[surface], `token ${viewer.token.id} has no scope for ${surface}`);
  }
  return viewer;
}

async function authenticateLocally(prisma: PrismaClient, token: string, now: Date): Promise<Viewer> {
  const tokenDigest = digestToken(token);
  const find = () => prisma.personalAccessToken.findUnique({ where: { tokenDigest }, include: { user: true } });
  // Cached for a few seconds (auth-cache.ts); expiry is still checked against `now` on every call.
  const cache = authCaches(prisma)?.tokens as TtlCache<Awaited<ReturnType<typeof find>>> | undefined;
  const record = cache ? await cache.get(tokenDigest, find) : await find();
  if (!record || record.revokedAt || record.user.state !== 'active' || isExpired(record.expiresAt, now)) {
    throw unauthenticated();
  }
  if (!record.lastUsedAt || now.getTime() - record.lastUsedAt.getTime() > LAST_USED_WRITE_INTERVAL_MS) {
    await prisma.personalAccessToken.update({ where: { id: record.id }, data: { lastUsedAt: now } });
    // The cached record too, so the next requests do not write it again.
    record.lastUsedAt = now;
  }
  const { user } = record;
  return {
    user: { id: user.id, username: user.username, name: user.name, email: user.email, admin: user.admin },
    token: { id: record.id, scopes: (record.scopes ?? []).filter(isTokenScope) },
  };
}

/** A token expires at the start of its expiry date (UTC), as GitLab's do. */
export function isExpired(expiresAt: Date | null, now: Date): boolean {
  if (!expiresAt) return false;
  return now.toISOString().slice(0, 10) >= expiresAt.toISOString().slice(0, 10);
}
