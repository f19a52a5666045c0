import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from './db/errors';
import { isRedisUnavailable, REDIS_UNAVAILABLE_MESSAGE } from './redis-availability';

/**
 * What a client is told when its request needed Redis or the database and it did not answer in time
 * (GraphQL SERVICE_UNAVAILABLE, HTTP 503, on every transport); null for any other error.
 */
export function unavailableMessage(error: unknown): string | null {
  if (isRedisUnavailable(error)) return REDIS_UNAVAILABLE_MESSAGE;
  if (isDatabaseUnavailable(error)) return DATABASE_UNAVAILABLE_MESSAGE;
  return null;
}
