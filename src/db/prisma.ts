export { PrismaClient, Prisma } from './generated/client';
export type * from './generated/client';
