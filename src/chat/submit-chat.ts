import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { assertDuoChat, requireReadableProject, requireReadableResource } from '../auth/policies';
import type { Viewer } from '../auth/viewer';
import type { PrismaClient } from '../db/prisma';
import type { DuoAccess } from '../auth/duo-access';
import { AppError, badInput, NOT_AVAILABLE } from '../errors';
import { numericId, toGlobalId, type GlobalId } from '../global-id';
import { countGatekeeperAnswer, countGatekeeperVerdict } from '../metrics/record';
import type { ChatJob, Queues } from '../queues';
import { chatErrorText } from './complete-chat';
import type { ChatEventBus } from './chat-events';
import { authorizeCodebaseItems } from './codebase-context';
import { validateContextItems, type ContextItemInput } from './context-items';
import { checkPrompt } from './check-prompt';
import { gateAnswer, gatekeeperContextOf, isConfirmation, type PromptChecker } from './gate-prompt';
import {
  clearConversation,
  createUserMessage,
  saveAssistantMessage,
  takePendingConfirmation,
  type ConversationType,
} from './messages.service';
import { THREAD_MAX_AGE_MS } from './threads.service';
import { commandTarget, helpAnswer, parseSlashCommand, refusalFor } from './slash-commands';
import { topicsFor } from './topics';
import { INPUT_LIMITS, requireMaxLength } from '../validation';

type GatekeeperDecision = { status: string; intent: string | null; confidence: number; intents: string[] };
import { activeChatRequestKey, gatekeeperCallsSavedKey } from '../redis-keys';
import type { Logger } from '../logger';

export type ChatRequest = {
  content: string;
  resourceId: GlobalId | null;
  projectId: GlobalId | null;
  agentVersionId: GlobalId | null;
  additionalContext: ContextItemInput[];
  currentFile: { fileName: string; selectedText: string; contentAboveCursor?: string | null; contentBelowCursor?: string | null } | null;
  clientSubscriptionId: string | null;
  conversationType: ConversationType | null;
  threadId: GlobalId | null;
  platformOrigin: string | null;
  /** Bypass the gatekeeper for this message. */
  skipGatekeeper?: boolean;
};

export type SubmitChatOptions = {
  prisma: PrismaClient;
  redis: Redis;
  redisPrefix: string;
  queues: Pick<Queues, 'enqueueChat'>;
  events: ChatEventBus;
  viewer: Viewer;
  access: DuoAccess;
  request: ChatRequest;
  /** The first-stage check of a prompt; null turns it off. */
  gatekeeper: PromptChecker | null;
  /** Where a model call the gatekeeper saved is logged. */
  logger: Logger;
};

export type SubmitChatResult = { requestId: string; threadId: number | null };

/** The most characters in a chat message's content, in aiChatPromptCheck's, and in each of currentFile's texts. */
export const CHAT_CONTENT_LIMIT = 600_000;

/**
 * aiAction(chat): validates, stores the user's message with its context items, echoes it to
 * subscribers and enqueues the answer. No model is called here; /reset and /clear enqueue nothing.
 */
export async function submitChat(options: SubmitChatOptions): Promise<SubmitChatResult> {
  const { prisma, viewer, request } = options;
  assertDuoChat(options.access);
  const content = request.content.trim();
  if (!content) throw badInput("content can't be blank", 'content');
  requireMaxLength(request.content, 'content', CHAT_CONTENT_LIMIT);
  checkCurrentFile(request.currentFile);
  requireMaxLength(request.clientSubscriptionId, 'clientSubscriptionId', INPUT_LIMITS.clientSubscriptionId);
  requireMaxLength(request.platformOrigin, 'platformOrigin', INPUT_LIMITS.platformOrigin);
  const contextItems = validateContextItems(request.additionalContext, options.access.chatContextCategories);
  const projectId = await readableProjectId(prisma, viewer, request.projectId);
  // Repository and directory context: nothing about a project's code goes anywhere unless the user may use it.
  await authorizeCodebaseItems({ prisma, viewer, access: options.access, items: contextItems, requestProjectId: projectId });
  const resourceId = await readableResource(prisma, viewer, request.resourceId);
  const existingThreadId = await findThread(prisma, viewer.user.id, request);
  const newThread =
    existingThreadId === null && request.conversationType && request.conversationType !== 'duo_chat_legacy'
      ? { conversationType: request.conversationType, title: content.split('\n')[0].slice(0, 80) }
      : null;
  const requestId = randomUUID();

  const slash = parseSlashCommand(content);
  if (slash?.command.kind === 'clear' && !slash.input) {
    // A thread that does not exist yet has nothing to clear.
    if (!newThread) await clearConversation(prisma, { userId: viewer.user.id, threadId: existingThreadId });
    return { requestId, threadId: existingThreadId };
  }
  // The new thread (if any) is created with the message, in one transaction: a refused write leaves no empty thread.
  const message = await createUserMessage(prisma, {
    userId: viewer.user.id,
    threadId: existingThreadId,
    newThread,
    requestId,
    content: request.content,
    contextItems,
    clientSubscriptionId: request.clientSubscriptionId,
    platformOrigin: request.platformOrigin,
    agentVersionId: request.agentVersionId ? toGlobalId(request.agentVersionId.model, request.agentVersionId.id) : null,
    resourceId,
    projectId,
  });
  const threadId = message.threadId;
  const conversation = { userId: viewer.user.id, threadId };
  // Set once the question has its answer stored, or its job queued: until then any failure (Redis, the database, the
  // gatekeeper) leaves it GitLab's error answer, so the history holds no question nobody answers.
  let settled = false;
  const storeFailedAnswer = async () => {
    const failed = chatErrorText('A9999');
    await saveAssistantMessage(prisma, {
      ...conversation,
      requestId,
      content: failed,
      errors: [failed],
      extras: { sources: [], contextItemIds: contextItems.map((item) => item.id) },
      agentVersionId: message.agentVersionId,
      clientSubscriptionId: request.clientSubscriptionId,
    }).catch((error: unknown) =>
      options.logger.warn({ event: 'chat_failure_unsaved', requestId, err: error }, 'could not store the failed answer'),
    );
  };
  try {
    const topicSource = {
      userId: viewer.user.id,
      clientSubscriptionId: request.clientSubscriptionId,
      resourceId,
      agentVersionId: message.agentVersionId,
    };
    // Sent now, awaited with what follows: commands on the one Redis connection keep their order, so
    // the echo still reaches subscribers before anything published after it, one round trip sooner.
    const echoed = options.events.publish(viewer.user.id, { message, topics: topicsFor(topicSource, 'user-echo') });
    echoed.catch(() => undefined); // awaited below; this only keeps an early throw from leaving it unhandled
    if (slash?.command.kind === 'reset' && !slash.input) {
      // Not a question: nothing answers it.
      settled = true;
      await echoed;
      return { requestId, threadId };
    }
    const answerNow = async (answer: string, gatekeeper?: GatekeeperDecision) => {
      await echoed;
      const { event } = await saveAssistantMessage(prisma, {
        ...conversation,
        requestId,
        content: answer,
        errors: [],
        extras: { sources: [], contextItemIds: contextItems.map((item) => item.id), ...(gatekeeper ? { gatekeeper } : {}) },
        agentVersionId: message.agentVersionId,
        clientSubscriptionId: request.clientSubscriptionId,
      });
      settled = true;
      if (request.clientSubscriptionId) {
        // A chunk has no HTML (GitLab's null): the stored rendering travels with the final message only.
        const { contentHtml: _html, ...chunk } = event;
        await options.events.publish(viewer.user.id, {
          message: { ...chunk, id: null, chunkId: 1 },
          topics: topicsFor(topicSource, 'chunk'),
        });
      }
      await options.events.publish(viewer.user.id, { message: event, topics: topicsFor(topicSource, 'final') });
      return { requestId, threadId };
    };

    /**
     * Queues the answer, the echo sent before it, once an older request on the same subscription is told
     * it was superseded. When either cannot be done (Redis down) the question is answered with GitLab's
     * error (storeFailedAnswer) and the client gets the error; a job queued after all (its reply was
     * late) finds that answer and sends it.
     */
    const enqueueAnswer = async (job: ChatJob) => {
      const queued = supersedeOlderRequests(options, requestId).then(() => options.queues.enqueueChat(job));
      const [echo, enqueued] = await Promise.allSettled([echoed, queued]);
      if (enqueued.status === 'rejected') throw enqueued.reason;
      settled = true;
      if (echo.status === 'rejected') throw echo.reason;
    };

    // A slash command fixes the intent; /help and a command with nothing to work on are answered
    // at once, without the model.
    if (slash?.command.kind === 'help') return answerNow(helpAnswer());
    if (slash?.command.kind === 'code') {
      if (!commandTarget({ input: slash.input, currentFile: request.currentFile, contextItems }))
        return answerNow(refusalFor(slash.command));
      await enqueueAnswer({
        requestId,
        userId: viewer.user.id,
        currentFile: request.currentFile,
        promptRequestId: null,
        intent: slash.command.intent ?? null,
      });
      return { requestId, threadId };
    }

    // Stage 2 of the gatekeeper: a confirmation runs the prompt it confirms; an unclear or
    // many-sided prompt is answered at once, without the model.
    let intent: string | null = null;
    let promptRequestId: string | null = null;
    const confirmed = isConfirmation(content) ? await takePendingConfirmation(prisma, conversation, requestId) : null;
    if (confirmed) {
      promptRequestId = confirmed.requestId;
      intent = confirmed.intent;
    } else if (options.gatekeeper && !request.skipGatekeeper && !isSlashCommand(content)) {
      const context = gatekeeperContextOf(request.currentFile, contextItems);
      // A thread is one conversation; the legacy conversation (no thread) runs on across subjects, so its messages are read alone.
      const verdict =
        threadId === null
          ? options.gatekeeper(content, context)
          : await checkPrompt({ prisma, check: options.gatekeeper, content, context, conversation, excludeRequestIds: [requestId] });
      countGatekeeperVerdict(verdict.status);
      const answer = gateAnswer(verdict);
      const gatekeeper = {
        status: verdict.status,
        intent: verdict.intent,
        confidence: verdict.confidence,
        intents: verdict.intents.map((part) => part.intent),
      };
      if (answer) {
        const result = await answerNow(answer, gatekeeper);
        countGatekeeperAnswer();
        options.logger.info(
          { event: 'gatekeeper_llm_call_saved', requestId, status: verdict.status },
          'gatekeeper answered without the model',
        );
        void options.redis.incr(gatekeeperCallsSavedKey(options.redisPrefix)).catch(() => undefined);
        return result;
      }
      intent = verdict.intent;
    }

    await enqueueAnswer({ requestId, userId: viewer.user.id, currentFile: request.currentFile, promptRequestId, intent });
    return { requestId, threadId };
  } catch (error) {
    if (!settled) await storeFailedAnswer();
    throw error;
  }
}

/** A newer request on the same client subscription supersedes one still streaming. */
async function supersedeOlderRequests(options: SubmitChatOptions, requestId: string): Promise<void> {
  const { viewer, request } = options;
  if (!request.clientSubscriptionId) return;
  // Sent in order on one connection, awaited together.
  await Promise.all([
    options.redis.set(activeChatRequestKey(options.redisPrefix, viewer.user.id, request.clientSubscriptionId), requestId, 'EX', 3600),
    options.events.publishCancel({ userId: viewer.user.id, clientSubscriptionId: request.clientSubscriptionId, supersededBy: requestId }),
  ]);
}

/**
 * Slash commands (/explain, /tests, /refactor, /fix, /troubleshoot, /help, and any added later)
 * say what they want by their name: every message starting with "/" and a word skips the gatekeeper.
 */
const isSlashCommand = (content: string) => /^\/[a-z]/i.test(content);

function checkCurrentFile(file: ChatRequest['currentFile']): void {
  if (!file) return;
  if (file.fileName.length > 255) throw badInput('currentFile.fileName is too long (maximum is 255 characters)', 'currentFile.fileName');
  for (const field of ['selectedText', 'contentAboveCursor', 'contentBelowCursor'] as const) {
    requireMaxLength(file[field], `currentFile.${field}`, CHAT_CONTENT_LIMIT);
  }
}

async function readableProjectId(prisma: PrismaClient, viewer: Viewer, projectId: GlobalId | null): Promise<number | null> {
  if (!projectId) return null;
  const id = numericId(projectId);
  if (id === null) throw new AppError({ code: 'NOT_FOUND', userMessage: NOT_AVAILABLE, field: 'projectId' });
  return (await requireReadableProject(prisma, viewer, { id }, 'projectId')).id;
}

/** Only projects are resources here; anything else, missing or hidden, gets the same answer. */
async function readableResource(prisma: PrismaClient, viewer: Viewer, resourceId: GlobalId | null): Promise<string | null> {
  return resourceId ? requireReadableResource(prisma, viewer, resourceId, 'resourceId') : null;
}

/** The user's live thread named by threadId, or null when none is named (a new one may be created with the message). */
async function findThread(prisma: PrismaClient, userId: number, request: ChatRequest): Promise<number | null> {
  if (!request.threadId) return null;
  const id = numericId(request.threadId);
  const thread = id === null ? null : await prisma.aiConversationThread.findFirst({ where: { id, userId } });
  if (!thread || Date.now() - thread.lastUpdatedAt.getTime() > THREAD_MAX_AGE_MS)
    throw badInput('Thread not found. It may have expired.', 'threadId');
  return thread.id;
}
