import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { PrismaClient } from './db/prisma';
import { AppError } from './errors';
import type { Logger } from './logger';

/** This database's id: made once, at the first start, and kept in service_identity. */
export async function databaseIdentity(prisma: PrismaClient): Promise<string> {
  const row = await prisma.serviceIdentity.upsert({ where: { id: 1 }, create: { id: 1, databaseId: randomUUID() }, update: {} });
  return row.databaseId;
}

export type ClaimPrefixOptions = {
  redis: Redis;
  prefix: string;
  databaseId: string;
  logger: Logger;
  /** How long a claim outlives the last instance that renewed it. Default 60 s. */
  ttlSeconds?: number;
};

export type PrefixClaim = {
  /** Stops renewing and, if the claim is still this database's, removes it. */
  release(): Promise<void>;
};

export const prefixClaimKey = (prefix: string) => `${prefix}:database-id`;

// Renews a claim that is ours or gone; answers the other database's id when it is not.
const RENEW = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then return current end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return false`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * Claims the Redis prefix for this database. Two instances on different databases behind one
 * prefix take each other's jobs (a chat answered by a worker that cannot find its message), so
 * the second one refuses to start and says to set REDIS_PREFIX. Processes of one database (API
 * and workers apart) share the claim. Every running process renews it; it lapses ttlSeconds
 * after the last one stopped without releasing it (a crash).
 */
export async function claimRedisPrefix(options: ClaimPrefixOptions): Promise<PrefixClaim> {
  const key = prefixClaimKey(options.prefix);
  const ttlSeconds = options.ttlSeconds ?? 60;
  const renew = async () => (await options.redis.eval(RENEW, 1, key, options.databaseId, String(ttlSeconds))) as string | null;
  const other = await renew();
  if (other) {
    const seconds = await options.redis.ttl(key);
    throw new AppError({
      code: 'CONFLICT',
      userMessage:
        `REDIS_PREFIX "${options.prefix}" is in use by an instance on another database (${other}): sharing it, each would take the ` +
        `other's jobs. ` +
        `Set REDIS_PREFIX to a prefix of this instance's own (e.g. REDIS_PREFIX=${options.prefix}-2). ` +
        `If that instance is gone for good, its claim lapses within ${Math.max(seconds, 0)} s.`,
    });
  }
  const timer = setInterval(
    () => {
      renew()
        .then((stolen) => {
          if (stolen)
            options.logger.error(
              { event: 'redis_prefix_conflict', prefix: options.prefix, otherDatabaseId: stolen },
              'another database claimed this REDIS_PREFIX: jobs may be taken by the wrong instance; give each instance its own ' +
                'REDIS_PREFIX',
            );
        })
        .catch((error: unknown) =>
          options.logger.warn({ event: 'redis_prefix_renew_failed', err: error }, 'could not renew the REDIS_PREFIX claim'),
        );
    },
    Math.max(1000, (ttlSeconds * 1000) / 3),
  );
  timer.unref();
  return {
    release: async () => {
      clearInterval(timer);
      await options.redis.eval(RELEASE, 1, key, options.databaseId).catch(() => undefined);
    },
  };
}
