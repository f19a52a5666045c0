import type { PrismaClient } from '../db/prisma';

/**
 * A short-lived cache of the look-ups every request makes before doing anything (its token and
 * user, the user's Duo seats, their access level on a project), per database client. Entries live
 * a few seconds (AUTH_CACHE_MS), so a revoked token, a blocked user or a removed seat or member
 * stops working within that long even when the change came from another process (an admin
 * command); changes made through this process's services clear the cache at once.
 *
 * Only a client the service configured has a cache: admin commands and other callers always read
 * the database.
 */
export class TtlCache<Value> {
  private readonly entries = new Map<string, { value: Promise<Value>; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** The cached value, or `load`'s (concurrent callers share one load; a failed load is not kept). */
  get(key: string, load: () => Promise<Value>): Promise<Value> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) return hit.value;
    if (this.entries.size >= this.maxEntries) this.evict(now);
    const value = load();
    this.entries.set(key, { value, expires: now + this.ttlMs });
    value.catch(() => this.entries.delete(key));
    return value;
  }

  clear(): void {
    this.entries.clear();
  }

  private evict(now: number): void {
    for (const [key, entry] of this.entries) if (entry.expires <= now) this.entries.delete(key);
    // Still full of live entries: drop the oldest half (Maps keep insertion order).
    if (this.entries.size >= this.maxEntries)
      [...this.entries.keys()].slice(0, this.maxEntries / 2).forEach((key) => this.entries.delete(key));
  }
}

/** The caches of one database client; values are whatever the owning module stores. */
export type AuthCaches = {
  tokens: TtlCache<unknown>;
  duoAccess: TtlCache<unknown>;
  accessLevels: TtlCache<number>;
  ancestry: TtlCache<number[]>;
};

const caches = new WeakMap<PrismaClient, AuthCaches>();

/** Turns the cache on for a client (the service does, with AUTH_CACHE_MS); 0 turns it off. */
export function configureAuthCache(prisma: PrismaClient, options: { ttlMs: number }): void {
  if (options.ttlMs <= 0) {
    caches.delete(prisma);
    return;
  }
  caches.set(prisma, {
    tokens: new TtlCache(options.ttlMs),
    duoAccess: new TtlCache(options.ttlMs),
    accessLevels: new TtlCache(options.ttlMs),
    ancestry: new TtlCache(options.ttlMs),
  });
}

/** The client's caches, or null when it has none. */
export function authCaches(prisma: PrismaClient): AuthCaches | null {
  return caches.get(prisma) ?? null;
}

/** Forgets everything cached for a client: after a token, user, seat or membership changed here. */
export function forgetCachedAuth(prisma: PrismaClient): void {
  const cached = caches.get(prisma);
  if (!cached) return;
  for (const cache of Object.values(cached)) cache.clear();
}
