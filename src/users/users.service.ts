import { forgetCachedAuth } from '../auth/auth-cache';
import { generateToken, digestToken, TOKEN_SCOPES, type TokenScope } from '../auth/tokens';
import type { PrismaClient, User } from '../db/prisma';
import { badInput, notFound } from '../errors';
import { requireEmail, requireEnum, requireFutureDate, requireNonBlank, requirePathSegment } from '../validation';
import { withConflict } from '../db/errors';
import { userAvatarUrl, userWebUrl } from '../instance';

export type CreateUserInput = { username: string; name?: string; email?: string; admin?: boolean };

export async function createUser(prisma: PrismaClient, input: CreateUserInput): Promise<User> {
  const username = requirePathSegment(input.username, 'username');
  const name = requireNonBlank(input.name ?? username, 'name');
  const email = requireEmail(input.email ?? `${username}@example.com`);
  return withConflict('A user with that username or email already exists', () =>
    prisma.user.create({ data: { username, name, email, admin: input.admin ?? false } }),
  );
}

export async function findUserByUsername(prisma: PrismaClient, username: string): Promise<User> {
  const user = await prisma.user.findUnique({ where: { username } });
  if (!user) throw notFound(`User ${username} not found`);
  return user;
}

export async function setUserState(prisma: PrismaClient, username: string, state: 'active' | 'blocked'): Promise<User> {
  const user = await findUserByUsername(prisma, username);
  const updated = await prisma.user.update({ where: { id: user.id }, data: { state } });
  forgetCachedAuth(prisma);
  return updated;
}

export type CreateTokenInput = {
  username: string;
  name?: string;
  /** Default: api. */
  scopes?: string[];
  /** YYYY-MM-DD; default: none. */
  expiresAt?: string;
};

export type CreatedToken = { id: number; token: string; scopes: TokenScope[]; expiresAt: Date | null };

/** Creates a token and returns it once; only its digest is stored. */
export async function createToken(prisma: PrismaClient, input: CreateTokenInput): Promise<CreatedToken> {
  const user = await findUserByUsername(prisma, input.username);
  const scopes = [...new Set(input.scopes && input.scopes.length > 0 ? input.scopes : ['api'])].map((scope) =>
    requireEnum(scope, TOKEN_SCOPES, 'scopes'),
  );
  const expiresAt = input.expiresAt ? requireFutureDate(input.expiresAt, 'expires_at') : null;
  const token = generateToken();
  const record = await prisma.personalAccessToken.create({
    data: { userId: user.id, name: requireNonBlank(input.name ?? 'duo-slice', 'name'), tokenDigest: digestToken(token), scopes, expiresAt },
  });
  return { id: record.id, token, scopes, expiresAt };
}

/** Revokes by id, or by the token itself. */
export async function revokeToken(prisma: PrismaClient, reference: { id?: number; token?: string }): Promise<void> {
  const where = reference.token ? { tokenDigest: digestToken(reference.token) } : reference.id ? { id: reference.id } : null;
  if (!where) throw badInput('Give the token id or the token', 'id');
  const record = await prisma.personalAccessToken.findUnique({ where });
  if (!record) throw notFound('Token not found');
  if (!record.revokedAt) await prisma.personalAccessToken.update({ where: { id: record.id }, data: { revokedAt: new Date() } });
  forgetCachedAuth(prisma);
}

/** Up to two initials of an active user's name (or username), or null when there is no such user. */
export async function findUserInitials(prisma: PrismaClient, userId: number): Promise<string | null> {
  const user = await prisma.user.findUnique({ where: { id: userId }, select: { name: true, username: true, state: true } });
  if (!user || user.state !== 'active') return null;
  const words = (user.name.trim() || user.username).split(/\s+/).filter(Boolean);
  return words
    .slice(0, 2)
    .map((word) => [...word][0].toUpperCase())
    .join('');
}

/** GitLab's REST representation of the signed-in user (`GET /api/v4/user`). */
export async function describeUser(prisma: PrismaClient, userId: number, externalUrl: string) {
  const user = await prisma.user.findUniqueOrThrow({ where: { id: userId } });
  return {
    id: user.id,
    username: user.username,
    name: user.name,
    state: user.state,
    locked: false,
    avatar_url: userAvatarUrl(externalUrl, user.id),
    web_url: userWebUrl(externalUrl, user.username),
    created_at: user.createdAt.toISOString(),
    bio: '',
    public_email: null,
    bot: false,
    email: user.email,
    is_admin: user.admin,
    can_create_group: true,
    can_create_project: true,
    two_factor_enabled: false,
    external: false,
    private_profile: false,
  };
}

/** GitLab's REST representation of a personal access token (`GET /api/v4/personal_access_tokens/self`). */
export async function describeToken(prisma: PrismaClient, tokenId: number, now: Date = new Date()) {
  const token = await prisma.personalAccessToken.findUniqueOrThrow({ where: { id: tokenId } });
  const expired = token.expiresAt !== null && now.toISOString().slice(0, 10) >= token.expiresAt.toISOString().slice(0, 10);
  return {
    id: token.id,
    name: token.name,
    revoked: token.revokedAt !== null,
    created_at: token.createdAt.toISOString(),
    description: null,
    scopes: token.scopes,
    user_id: token.userId,
    last_used_at: token.lastUsedAt?.toISOString() ?? null,
    active: token.revokedAt === null && !expired,
    expires_at: token.expiresAt?.toISOString().slice(0, 10) ?? null,
  };
}

/**
 * Doorkeeper's token info (`GET /oauth/token/info`) for one of our tokens: the owner, scopes,
 * seconds until it expires (null when it never does) and creation time in epoch seconds. Our
 * tokens belong to no OAuth application, so `application.uid` is null.
 */
export async function describeTokenInfo(prisma: PrismaClient, tokenId: number, now: Date = new Date()) {
  const token = await prisma.personalAccessToken.findUniqueOrThrow({ where: { id: tokenId } });
  // A token expires at the start of its expiry date (UTC).
  const expiresIn = token.expiresAt
    ? Math.max(0, Math.floor((Date.parse(`${token.expiresAt.toISOString().slice(0, 10)}T00:00:00Z`) - now.getTime()) / 1000))
    : null;
  return {
    resource_owner_id: token.userId,
    scope: token.scopes,
    expires_in: expiresIn,
    application: { uid: null },
    created_at: Math.floor(token.createdAt.getTime() / 1000),
    scopes: token.scopes,
    expires_in_seconds: expiresIn,
  };
}
