import { DATABASE_NOT_ANSWERING, DATABASE_UNAVAILABLE_MESSAGE, driverMessage, errorChain, isDatabaseUnavailable } from './db/errors';
import { isAppError } from './errors';
import { isRedisUnavailable, isRefusedUnsent, REDIS_UNAVAILABLE_MESSAGE } from './redis-availability';

/**
 * What a client is told when its request needed Redis, the database or GitLab and it did not answer in time
 * (GraphQL SERVICE_UNAVAILABLE, HTTP 503, on every transport); null for any other error.
 */
export function unavailableMessage(error: unknown): string | null {
  // GitLab not answering (connected mode): its own message names it.
  if (isAppError(error) && error.code === 'UNAVAILABLE') return error.userMessage;
  if (isRedisUnavailable(error)) return REDIS_UNAVAILABLE_MESSAGE;
  if (isDatabaseUnavailable(error)) return DATABASE_UNAVAILABLE_MESSAGE;
  return null;
}

/**
 * Whether a request failed on a dependency already known not to answer: its command or statement was refused
 * unsent. The outage was logged once where it was seen (redis_not_answering, database_not_answering), so the
 * requests it fails meanwhile are not logged one by one.
 */
export function refusedUnsent(error: unknown): boolean {
  return errorChain(error).some((current) => isRefusedUnsent(current) || driverMessage(current) === DATABASE_NOT_ANSWERING);
}
