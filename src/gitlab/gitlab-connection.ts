import { TtlCache } from '../auth/auth-cache';
import type { GitLabConfig } from '../config';
import type { PrismaClient } from '../db/prisma';
import type { Logger } from '../logger';
import { GitLabClient } from './gitlab-client';

/** What GitLab's answers are cached as, each for AUTH_CACHE_MS. */
type Caches = {
  /** By the token's SHA-256 (never the token): who it belongs to, its scopes and expiry; null when GitLab refused it. */
  identities: TtlCache<unknown>;
  /** By credential digest and project reference: the project as that caller sees it, null when hidden or missing. */
  projects: TtlCache<unknown>;
  /** By user id: whether DUO_ACCESS lets them use Duo. */
  duoAccess: TtlCache<boolean>;
};

/** The GitLab a service's database client is connected to (connected mode). */
export type GitLabConnection = {
  client: GitLabClient;
  config: GitLabConfig;
  /** GitLab's answer for `key`, reused for AUTH_CACHE_MS (0: asked every time); a failed look-up is not kept. */
  cached<Value>(cache: keyof Caches, key: string, load: () => Promise<Value>): Promise<Value>;
};

export type ConnectGitLabOptions = {
  config: GitLabConfig;
  logger: Logger;
  /** AUTH_CACHE_MS. */
  cacheMs: number;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
};

const connections = new WeakMap<PrismaClient, GitLabConnection>();

/**
 * Connects a database client to GitLab (the service does it when GITLAB_URL is set): from then on
 * authentication, project look-ups, access levels and Duo access on that client ask GitLab. Kept
 * beside the client, as its auth caches are (auth-cache.ts), so that every service function that
 * takes the client takes the connection with it.
 */
export function connectGitLab(prisma: PrismaClient, options: ConnectGitLabOptions): GitLabConnection {
  const client = new GitLabClient({
    url: options.config.url,
    serviceToken: options.config.serviceToken,
    timeoutMs: options.config.timeoutMs,
    logger: options.logger,
    fetch: options.fetch,
  });
  const caches: Caches | null =
    options.cacheMs > 0
      ? { identities: new TtlCache(options.cacheMs), projects: new TtlCache(options.cacheMs), duoAccess: new TtlCache(options.cacheMs) }
      : null;
  const connection: GitLabConnection = {
    client,
    config: options.config,
    cached: <Value>(cache: keyof Caches, key: string, load: () => Promise<Value>) =>
      caches ? (caches[cache] as TtlCache<Value>).get(key, load) : load(),
  };
  connections.set(prisma, connection);
  return connection;
}

/** The client's GitLab, or null when the service is standalone. */
export function gitLabConnection(prisma: PrismaClient): GitLabConnection | null {
  return connections.get(prisma) ?? null;
}
