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
