import type { AiConversationThread, PrismaClient } from '../db/prisma';
import { badInput, notFound } from '../errors';
import { numericId, toGlobalId, type GlobalId } from '../global-id';

/** GitLab keeps a conversation thread for 30 days after its last update. */
export const THREAD_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

/** Deletes one of the user's threads with its messages; another user's thread is "not found" too. */
export async function deleteThread(prisma: PrismaClient, options: { userId: number; threadId: number }): Promise<void> {
  const { count } = await prisma.aiConversationThread.deleteMany({ where: { id: options.threadId, userId: options.userId } });
  if (count === 0) throw notFound('Thread not found. It may have expired.');
}

/**
 * Removes threads (and so their messages and feedback) not updated for THREAD_MAX_AGE_MS, and messages of the legacy
 * conversation (no thread) as old. Returns how many threads and legacy messages.
 */
export async function purgeExpiredThreads(
  prisma: PrismaClient,
  now: Date = new Date(),
): Promise<{ threads: number; legacyMessages: number }> {
  const cutoff = new Date(now.getTime() - THREAD_MAX_AGE_MS);
  const { count: threads } = await prisma.aiConversationThread.deleteMany({ where: { lastUpdatedAt: { lt: cutoff } } });
  const { count: legacyMessages } = await prisma.aiMessage.deleteMany({ where: { threadId: null, createdAt: { lt: cutoff } } });
  return { threads, legacyMessages };
}

const activeSince = (now: Date) => new Date(now.getTime() - THREAD_MAX_AGE_MS);

/**
 * Which conversation aiMessages reads (GitLab's rule): the given thread, which must be the user's;
 * else the user's latest thread of the conversation type; else, for no type or DUO_CHAT_LEGACY,
 * the legacy conversation (null). A type with no thread yet reads nothing: -1 matches no thread.
 */
export async function findThreadForMessages(
  prisma: PrismaClient,
  options: { userId: number; threadId: GlobalId | null; conversationType: string | null; now?: Date },
): Promise<number | null> {
  const now = options.now ?? new Date();
  if (options.threadId) {
    const id = numericId(options.threadId);
    const thread =
      id === null
        ? null
        : await prisma.aiConversationThread.findFirst({ where: { id, userId: options.userId, lastUpdatedAt: { gte: activeSince(now) } } });
    if (!thread) throw badInput(`Thread ${toGlobalId(options.threadId.model, options.threadId.id)} is not found.`, 'threadId');
    return thread.id;
  }
  if (!options.conversationType || options.conversationType === 'duo_chat_legacy') return null;
  const latest = await prisma.aiConversationThread.findFirst({
    where: {
      userId: options.userId,
      conversationType: options.conversationType as AiConversationThread['conversationType'],
      lastUpdatedAt: { gte: activeSince(now) },
    },
    orderBy: { lastUpdatedAt: 'desc' },
  });
  return latest?.id ?? -1;
}

/** The user's live threads, most recently updated first. */
export async function listThreads(
  prisma: PrismaClient,
  options: { userId: number; conversationType?: string | null; threadId?: number | null; now?: Date },
): Promise<AiConversationThread[]> {
  return prisma.aiConversationThread.findMany({
    where: {
      userId: options.userId,
      lastUpdatedAt: { gte: activeSince(options.now ?? new Date()) },
      ...(options.conversationType ? { conversationType: options.conversationType as AiConversationThread['conversationType'] } : {}),
      ...(options.threadId !== undefined && options.threadId !== null ? { id: options.threadId } : {}),
    },
    orderBy: [{ lastUpdatedAt: 'desc' }, { id: 'desc' }],
    take: 1000,
  });
}
