/** Prisma's "unique constraint failed" (P2002), whichever adapter raised it. */
export function isUniqueViolation(error: unknown): boolean {
  const candidate = error as { code?: string; cause?: { code?: string } } | null;
  return candidate?.code === 'P2002' || candidate?.cause?.code === '23505';
}
