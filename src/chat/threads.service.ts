import type { PrismaClient } from '../db/prisma';
import { notFound } from '../errors';

/** GitLab keeps a conversation thread for 30 days after its last update. */
export const THREAD_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

/** Deletes one of the user's threads with its messages; another user's thread is "not found" too. */
export async function deleteThread(prisma: PrismaClient, options: { userId: number; threadId: number }): Promise<void> {
  const { count } = await prisma.aiConversationThread.deleteMany({ where: { id: options.threadId, userId: options.userId } });
  if (count === 0) throw notFound('Thread not found. It may have expired.');
}

/** Removes threads (and so their messages) not updated for THREAD_MAX_AGE_MS. Returns how many. */
export async function purgeExpiredThreads(prisma: PrismaClient, now: Date = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - THREAD_MAX_AGE_MS);
  const { count } = await prisma.aiConversationThread.deleteMany({ where: { lastUpdatedAt: { lt: cutoff } } });
  return count;
}
