import { digestToken, isTokenScope } from '../auth/tokens';
import type { Viewer } from '../auth/viewer';
import type { PrismaClient } from '../db/prisma';
import { AppError, unauthenticated } from '../errors';
import type { GitLabCredential } from './gitlab-client';
import { gitLabConnection, type GitLabConnection } from './gitlab-connection';
import { mirrorGitLabUser } from './mirror';

/** What GitLab said about a token, cached (by its digest) for AUTH_CACHE_MS. */
type Identity = {
  tokenId: number;
  /** GitLab's scopes, all of them (read_user, read_repository, ...). */
  scopes: string[];
  /** An access token's expiry date (YYYY-MM-DD); it stops at the start of that day, UTC. */
  expiresAt: string | null;
  /** An OAuth token's end (ms since the epoch). */
  expiresAtMs: number | null;
  user: Viewer['user'];
};

// The token a viewer came with, to send on with that viewer's own requests to GitLab. Kept beside the viewer, not in it:
// a viewer is logged, copied into contexts and jobs; the token must go nowhere else.
const credentials = new WeakMap<Viewer, string>();

/**
 * The credential to ask GitLab with on the viewer's behalf: their own token, anonymous for no
 * viewer, or null for a viewer that came with no token (a job run for a user after their request).
 */
export function viewerCredential(viewer: Viewer | null): GitLabCredential | null {
  if (!viewer) return { kind: 'anonymous' };
  const token = credentials.get(viewer);
  return token ? { kind: 'user', token } : null;
}

/** A short stable name for a credential in cache keys: never the token itself. */
export function credentialKey(credential: GitLabCredential): string {
  return credential.kind === 'user' ? `user:${digestToken(credential.token)}` : credential.kind;
}

/**
 * The viewer behind a token, as GitLab has it: personal, project and group access tokens through
 * /personal_access_tokens/self, OAuth tokens through /oauth/token/info, the user through /user
 * (mirrored locally by GitLab's id). A token GitLab refuses (wrong, revoked, expired, a blocked or
 * deleted user) is the same 401 as a local one. GitLab's answer is reused for AUTH_CACHE_MS, so a
 * change on GitLab holds here once that has passed; GitLab not answering is a 503 naming it.
 */
export async function authenticateWithGitLab(prisma: PrismaClient, gitlab: GitLabConnection, token: string, now: Date): Promise<Viewer> {
  const identity = await gitlab.cached('identities', digestToken(token), () => readIdentity(prisma, gitlab, token));
  if (!identity) throw unauthenticated();
  const current = identity;
  // GitLab's rule, as for local tokens: an access token stops at the start of its expiry date (UTC).
  if (current.expiresAt && now.toISOString().slice(0, 10) >= current.expiresAt.slice(0, 10)) throw unauthenticated();
  if (current.expiresAtMs !== null && now.getTime() >= current.expiresAtMs) throw unauthenticated();
  const viewer: Viewer = { user: { ...current.user }, token: { id: current.tokenId, scopes: current.scopes.filter(isTokenScope) } };
  credentials.set(viewer, token);
  return viewer;
}

/**
 * The token's own facts: an access token's from /personal_access_tokens/self, an OAuth token's from
 * /oauth/token/info; null when GitLab takes it as neither.
 */
async function readTokenFacts(gitlab: GitLabConnection, token: string): Promise<(Omit<Identity, 'user'> & { userId: number }) | null> {
  const { client } = gitlab;
  const asAccessToken = async () => {
    const self = await client.personalAccessTokenSelf(token);
    if (!self) return undefined;
    if (self.revoked || !self.active) return null;
    return { tokenId: self.id, scopes: self.scopes, expiresAt: self.expires_at, expiresAtMs: null, userId: self.user_id };
  };
  const asOAuthToken = async () => {
    const info = await client.oauthTokenInfo(token);
    if (!info || info.resource_owner_id === null) return undefined;
    return {
      tokenId: 0,
      scopes: info.scope,
      expiresAt: null,
      expiresAtMs: info.expires_in === null ? null : Date.now() + info.expires_in * 1000,
      userId: info.resource_owner_id,
    };
  };
  // Access tokens start with GitLab's default prefix (an instance may set another): asked first in the likelier place.
  const [first, second] = token.startsWith('glpat-') ? [asAccessToken, asOAuthToken] : [asOAuthToken, asAccessToken];
  // undefined: not this kind of token; null: this kind, and refused (revoked, inactive).
  const facts = await first();
  return facts !== undefined ? facts : ((await second()) ?? null);
}

async function readIdentity(prisma: PrismaClient, gitlab: GitLabConnection, token: string): Promise<Identity | null> {
  const { client } = gitlab;
  const facts = await readTokenFacts(gitlab, token);
  if (!facts) return null;
  const { userId, ...rest } = facts;
  const user = await client.currentUser(token);
  if (user === 'refused') return null;
  if (user === 'insufficient_scope') {
    // GitLab took the token (so its user is active) but it may not read the user: one mirrored before stands in.
    const known = await prisma.user.findUnique({ where: { gitlabUserId: userId } });
    if (!known)
      throw new AppError({
        code: 'FORBIDDEN',
        userMessage:
          'This token may not read its own user on GitLab (it needs read_user, read_api or api), ' +
          'and its user has not used duo-slice before',
      });
    return { ...rest, user: viewerUser(known) };
  }
  if (user.id !== userId || user.state !== 'active') return null;
  return { ...rest, user: viewerUser(await mirrorGitLabUser(prisma, gitlab.config.url, user)) };
}

function viewerUser(user: { id: number; username: string; name: string; email: string; admin: boolean }): Viewer['user'] {
  return { id: user.id, username: user.username, name: user.name, email: user.email, admin: user.admin };
}

/**
 * GitLab's own answer about the viewer's token (GET /api/v4/personal_access_tokens/self or
 * /oauth/token/info, asked with that token), for the same paths here; null when the service is
 * standalone, whose tokens are its own.
 */
export async function gitLabTokenAnswer(
  prisma: PrismaClient,
  viewer: Viewer,
  which: 'personal_access_tokens/self' | 'oauth/token/info',
): Promise<{ status: number; body: unknown } | null> {
  const gitlab = gitLabConnection(prisma);
  const credential = viewerCredential(viewer);
  if (!gitlab || !credential) return null;
  const response = await gitlab.client.request({
    path: which === 'oauth/token/info' ? '/oauth/token/info' : '/api/v4/personal_access_tokens/self',
    credential,
  });
  return { status: response.status, body: response.body };
}
