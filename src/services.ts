import type { Redis } from 'ioredis';
import type { Config } from './config';
import type { PrismaClient } from './db/prisma';
import type { Logger } from './logger';

/** What the edges (resolvers, routes, workers, commands) are given: built once in the composition root. */
export type Services = {
  config: Config;
  prisma: PrismaClient;
  redis: Redis;
  logger: Logger;
  /** The git revision the service runs, or "unknown". */
  revision: string;
};
