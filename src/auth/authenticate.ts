import { unauthenticated } from '../errors';
import type { PrismaClient } from '../db/prisma';
import { authCaches, type TtlCache } from './auth-cache';
import { digestToken, isTokenScope } from './tokens';
import type { Viewer } from './viewer';

// GitLab also writes last_used_at at most every 10 minutes, to keep reads from becoming writes.
const LAST_USED_WRITE_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Finds the user behind a token. Wrong, expired and revoked tokens and blocked users are all the
 * same 401, so that a caller learns nothing about which one it was.
 */
export async function authenticateToken(prisma: PrismaClient, token: string, now: Date = new Date()): Promise<Viewer> {
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
