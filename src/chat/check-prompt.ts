import { NO_CONTEXT, THREAD_TURNS_READ, type GatekeeperContext, type ThreadTurn } from '../gatekeeper/context';
import type { PrismaClient } from '../db/prisma';
import type { GlobalId } from '../global-id';
import type { GatekeeperVerdict, PromptChecker } from './gate-prompt';
import { conversationHistory, type Conversation } from './messages.service';
import { findThreadForMessages } from './threads.service';

export type CheckPromptOptions = {
  prisma: PrismaClient;
  check: PromptChecker;
  content: string;
  /** What the request attached (selected code, a file, a codebase). */
  context: GatekeeperContext;
  /** The conversation the message belongs to: its last turns are read with it. */
  conversation: Conversation;
  /** Requests of the conversation not to read (the message itself, once stored). */
  excludeRequestIds: string[];
};

/**
 * The gatekeeper's verdict on a message in its conversation: the last THREAD_TURNS_READ turns
 * since the last /reset (failed answers left out, as the model's history leaves them out) go
 * with it, so "why?" after "what is a monad?" is read as the follow-up it is.
 */
export async function checkPrompt(options: CheckPromptOptions): Promise<GatekeeperVerdict> {
  const history = await conversationHistory(options.prisma, options.conversation, options.excludeRequestIds, THREAD_TURNS_READ);
  const thread: ThreadTurn[] = history.flatMap((turn) =>
    turn.role === 'user' || turn.role === 'assistant' ? [{ role: turn.role, content: turn.content }] : [],
  );
  return options.check(options.content, { ...options.context, thread });
}

/**
 * aiChatPromptCheck: the message alone, or in the user's thread when one is named. The thread is
 * found as aiMessages finds it (another user's thread and an expired one are "not found" alike),
 * even when the gatekeeper is off (null), so a wrong id is an error whatever the setting.
 */
export async function checkPromptFor(options: {
  prisma: PrismaClient;
  check: PromptChecker | null;
  content: string;
  userId: number;
  threadId: GlobalId | null;
}): Promise<GatekeeperVerdict | null> {
  const { prisma, check, content, userId } = options;
  const threadId = options.threadId
    ? await findThreadForMessages(prisma, { userId, threadId: options.threadId, conversationType: null })
    : null;
  if (!check) return null;
  if (threadId === null) return check(content);
  return checkPrompt({ prisma, check, content, context: NO_CONTEXT, conversation: { userId, threadId }, excludeRequestIds: [] });
}
