import { AppError } from '../errors';

/**
 * Prisma's "unique constraint failed" (P2002), whichever adapter raised it; from a raw query it is
 * P2010 with the driver adapter's error (kind UniqueConstraintViolation, PostgreSQL's 23505); from a
 * statement sent straight to the pool (queryRows) it is `pg`'s own error, code 23505.
 */
export function isUniqueViolation(error: unknown): boolean {
  const candidate = error as {
    code?: string;
    cause?: { code?: string };
    meta?: { driverAdapterError?: { cause?: { kind?: string; originalCode?: string } } };
  } | null;
  if (candidate?.code === 'P2002' || candidate?.code === '23505' || candidate?.cause?.code === '23505') return true;
  const cause = candidate?.code === 'P2010' ? candidate.meta?.driverAdapterError?.cause : undefined;
  return cause?.kind === 'UniqueConstraintViolation' || cause?.originalCode === '23505';
}

/** Runs a create; a unique violation becomes a CONFLICT with the given message. */
export async function withConflict<T>(message: string, create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError({ code: 'CONFLICT', userMessage: message, cause: error });
    throw error;
  }
}

/** What a client is told when its request needed the database and it did not answer (GraphQL SERVICE_UNAVAILABLE, HTTP 503). */
export const DATABASE_UNAVAILABLE_MESSAGE = 'Temporarily unavailable: the database did not answer. Try again shortly.';

/** What the requests' pool says of a statement or connection refused unsent while the database is not answering (request-timeout.ts). */
export const DATABASE_NOT_ANSWERING = 'The database is not answering: the statement was not sent';

// Prisma's "can't reach", "timed out", "socket timeout" and "server closed the connection".
const PRISMA_UNREACHABLE = new Set(['P1001', 'P1002', 'P1008', 'P1017']);
// The driver adapter's kinds for the same, and for a server that takes no more connections.
const ADAPTER_UNREACHABLE = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
// The socket's, and PostgreSQL's: too many connections, shutting down or starting, connection exceptions (class 08).
const CODES_UNREACHABLE = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EPIPE|53300|57P0[123]|08\d{3})$/;
// pg's own: a statement, a wait for a pooled connection or a connect past its timeout, a connection that ended
// under a statement.
const PG_UNREACHABLE = new RegExp(
  '^(Query read timeout|timeout exceeded when trying to connect|timeout expired|Connection terminated|' +
    'Connection terminated unexpectedly|Connection terminated due to connection timeout|' +
    'Client has encountered a connection error and is not queryable|' +
    // request-timeout.ts: refused unsent while the database is not answering.
    `${DATABASE_NOT_ANSWERING})$`,
);

/**
 * Whether an error means the database could not be reached in time (as opposed to answering with an error):
 * pg's timeouts (request-timeout.ts), its and the socket's errors, and Prisma's wrappings of them (by code, by the driver
 * adapter's kind, or by the message of an error it passed on). By shape, not class: an error from another realm
 * (a test's sandbox) is not `instanceof Error`.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return errorChain(error).some((current) => {
    const candidate = current as { code?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: string } } } };
    if (typeof candidate.code === 'string' && (PRISMA_UNREACHABLE.has(candidate.code) || CODES_UNREACHABLE.test(candidate.code)))
      return true;
    if (ADAPTER_UNREACHABLE.has(candidate.meta?.driverAdapterError?.cause?.kind ?? '')) return true;
    return PG_UNREACHABLE.test(driverMessage(current) ?? '');
  });
}

/**
 * An error and those it wraps, outermost first, at most five: Prisma's `cause`, and graphql-js' wrapping of a thrown
 * value that is not an Error of its realm (NonErrorThrown: `thrownValue`).
 */
export function errorChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current && chain.length < 5;) {
    chain.push(current);
    const candidate = current as { cause?: unknown; thrownValue?: unknown };
    current = candidate.cause ?? candidate.thrownValue;
  }
  return chain;
}

/** An error's message as the driver wrote it: Prisma puts its own lines before the driver's. */
export function driverMessage(error: unknown): string | null {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.trim().split('\n').at(-1)!.trim() : null;
}
