import type { Prisma, PrismaClient } from '../db/prisma';
import { AppError, NOT_AVAILABLE } from '../errors';
import { INPUT_LIMITS, isUuid, requireMaxJsonBytes, requireMaxLength } from '../validation';

export type FeedbackInput = {
  userId: number;
  messageId: string;
  trackingEvent: { category: string; action: string; label?: string | null; property?: string | null; extra?: unknown } | null;
};

// GitLab forwards only these keys of trackingEvent.extra.
const EXTRA_KEYS = ['improveWhat', 'didWhat', 'promptLocation'] as const;

/** duoUserFeedback: marks the user's message as rated and keeps the event for tuning (the latest one per message). */
export async function recordFeedback(prisma: PrismaClient, input: FeedbackInput): Promise<void> {
  for (const key of ['category', 'action', 'label', 'property'] as const) {
    requireMaxLength(input.trackingEvent?.[key], `trackingEvent.${key}`, INPUT_LIMITS.trackingEventField);
  }
  const message = isUuid(input.messageId)
    ? await prisma.aiMessage.findFirst({ where: { id: input.messageId, userId: input.userId } })
    : null;
  if (!message) throw new AppError({ code: 'NOT_FOUND', userMessage: NOT_AVAILABLE, field: 'aiMessageId' });
  const extra =
    input.trackingEvent?.extra && typeof input.trackingEvent.extra === 'object'
      ? (input.trackingEvent.extra as Record<string, unknown>)
      : {};
  const details = {
    category: input.trackingEvent?.category ?? null,
    action: input.trackingEvent?.action ?? null,
    label: input.trackingEvent?.label ?? null,
    property: input.trackingEvent?.property ?? null,
    extra: Object.fromEntries(EXTRA_KEYS.filter((key) => key in extra).map((key) => [key, extra[key]])),
  };
  requireMaxJsonBytes(details.extra, 'trackingEvent.extra', INPUT_LIMITS.trackingEventExtraBytes);
  const event = input.trackingEvent?.action ?? 'feedback';
  await prisma.$transaction([
    prisma.aiMessage.update({ where: { id: message.id }, data: { hasFeedback: true } }),
    // One per message per user: feedback sent again replaces what was there, so it cannot grow the table.
    prisma.aiMessageFeedback.upsert({
      where: { messageId_userId: { messageId: message.id, userId: input.userId } },
      create: { messageId: message.id, userId: input.userId, event, details: details as Prisma.InputJsonValue },
      update: { event, details: details as Prisma.InputJsonValue, createdAt: new Date() },
    }),
  ]);
}

export type FeedbackTurn = {
  feedbackId: number;
  event: string;
  details: unknown;
  createdAt: string;
  requestId: string;
  prompt: string | null;
  contextItemIds: string[];
  answer: string | null;
};

/** Every rated turn (prompt, its context item ids, the answer) with its feedback, oldest first, in batches. */
export async function* feedbackTurns(prisma: PrismaClient, batchSize = 200): AsyncGenerator<FeedbackTurn> {
  let cursor = 0;
  for (;;) {
    const batch = await prisma.aiMessageFeedback.findMany({
      where: { id: { gt: cursor } },
      orderBy: { id: 'asc' },
      take: batchSize,
      include: { message: true },
    });
    if (batch.length === 0) return;
    const requestIds = [...new Set(batch.map((feedback) => feedback.message.requestId))];
    const turns = await prisma.aiMessage.findMany({
      where: { requestId: { in: requestIds } },
      include: { contextItems: { orderBy: { position: 'asc' } } },
    });
    for (const feedback of batch) {
      const turn = turns.filter((message) => message.requestId === feedback.message.requestId);
      const prompt = turn.find((message) => message.role === 'user');
      const answer = turn.find((message) => message.role === 'assistant');
      yield {
        feedbackId: feedback.id,
        event: feedback.event,
        details: feedback.details,
        createdAt: feedback.createdAt.toISOString(),
        requestId: feedback.message.requestId,
        prompt: prompt?.content ?? null,
        contextItemIds: prompt?.contextItems.map((item) => item.itemId) ?? [],
        answer: answer?.content ?? null,
      };
    }
    cursor = batch[batch.length - 1].id;
  }
}
