import type { PrismaClient } from '../../db/prisma';
import { INPUT_LIMITS, requireMaxLength } from '../../validation';
import { AppError, NOT_AVAILABLE } from '../../errors';
import { isUuid } from '../../validation';

export const SUGGESTION_FEEDBACK_EVENTS = ['ACCEPTED', 'REJECTED', 'EXECUTED'] as const;
export type SuggestionFeedbackEvent = (typeof SUGGESTION_FEEDBACK_EVENTS)[number];

/** The same answer for a missing session or suggestion and for someone else's. */
export const SESSION_NOT_AVAILABLE = NOT_AVAILABLE;

export type SuggestionFeedbackInput = {
  userId: number;
  sessionId: string;
  suggestionId: string;
  event: SuggestionFeedbackEvent;
  finalText: string | null;
};

/**
 * Keeps an ACCEPTED, REJECTED or EXECUTED event on one of the user's completed suggestions (the
 * suggestion row holds the document state it was made for); for a rejection `finalText` is what
 * the user wrote instead. Works after the session expired: a user may run the code later. The latest of each
 * event is kept.
 */
export async function recordSuggestionFeedback(prisma: PrismaClient, input: SuggestionFeedbackInput): Promise<void> {
  requireMaxLength(input.finalText, 'finalText', INPUT_LIMITS.suggestionFinalText);
  const suggestion =
    isUuid(input.sessionId) && isUuid(input.suggestionId)
      ? await prisma.codeSuggestion.findFirst({
          where: { id: input.suggestionId, sessionId: input.sessionId, session: { userId: input.userId } },
          select: { id: true },
        })
      : null;
  if (!suggestion) throw new AppError({ code: 'NOT_FOUND', userMessage: SESSION_NOT_AVAILABLE, field: 'suggestionId' });
  // One per suggestion per event: sent again, it replaces what was there.
  await prisma.codeSuggestionFeedback.upsert({
    where: { suggestionId_event: { suggestionId: suggestion.id, event: input.event } },
    create: { suggestionId: suggestion.id, userId: input.userId, event: input.event, finalText: input.finalText },
    update: { finalText: input.finalText, createdAt: new Date() },
  });
}

/** One exported line: the feedback, the suggestion and the document state it was made for. */
export type SuggestionFeedbackRow = {
  feedbackId: number;
  event: string;
  finalText: string | null;
  createdAt: string;
  sessionId: string;
  suggestionId: string;
  fileName: string;
  projectPath: string | null;
  language: string | null;
  intent: string;
  generationType: string | null;
  revision: number;
  content: string;
  cursorOffset: number;
  suggestion: string;
};

/** Every code suggestion feedback event with what it rates, oldest first, in batches. */
export async function* suggestionFeedbackRows(prisma: PrismaClient, batchSize = 200): AsyncGenerator<SuggestionFeedbackRow> {
  let cursor = 0;
  for (;;) {
    const batch = await prisma.codeSuggestionFeedback.findMany({
      where: { id: { gt: cursor } },
      orderBy: { id: 'asc' },
      take: batchSize,
      include: { suggestion: { include: { session: true } } },
    });
    if (batch.length === 0) return;
    for (const feedback of batch) {
      const { suggestion } = feedback;
      yield {
        feedbackId: feedback.id,
        event: feedback.event,
        finalText: feedback.finalText,
        createdAt: feedback.createdAt.toISOString(),
        sessionId: suggestion.sessionId,
        suggestionId: suggestion.id,
        fileName: suggestion.session.fileName,
        projectPath: suggestion.session.projectPath,
        language: suggestion.language,
        intent: suggestion.intent,
        generationType: suggestion.generationType,
        revision: suggestion.revision,
        content: suggestion.content,
        cursorOffset: suggestion.cursorOffset,
        suggestion: suggestion.text,
      };
    }
    cursor = batch[batch.length - 1].id;
  }
}
