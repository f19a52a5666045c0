import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { findReadableProject } from '../auth/policies';
import type { Viewer } from '../auth/viewer';
import type { PrismaClient } from '../db/prisma';
import type { DuoAccess } from '../duo/duo-access';
import { AppError, badInput, forbidden, NOT_AVAILABLE } from '../errors';
import { numericId, toGlobalId, type GlobalId } from '../graphql/global-id';
import type { Queues } from '../queues';
import type { ChatEventBus } from './chat-events';
import { authorizeCodebaseItems } from './codebase-context';
import { validateContextItems, type ContextItemInput } from './context-items';
import { gateAnswer, isConfirmation, type PromptChecker } from './gate-prompt';
import { clearConversation, createUserMessage, saveAssistantMessage, takePendingConfirmation } from './messages.service';
import { THREAD_MAX_AGE_MS } from './threads.service';
import { topicsFor } from './topics';

export type ConversationType = 'duo_chat_legacy' | 'duo_code_review' | 'duo_quick_chat' | 'duo_chat';

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
  /** Redis key prefix for the gatekeeper's saved-call counter; logs go here too. */
  onGatekeeperSaved?: (details: { requestId: string; status: string }) => void;
};

export type SubmitChatResult = { requestId: string; threadId: number | null };


const CURRENT_FILE_LIMIT = 600_000;
const SLASH_RESET = '/reset';
const SLASH_CLEAR = ['/clear', '/clean'];

/** Which key marks the newest request of a client subscription, so older ones know they are superseded. */
export const activeRequestKey = (prefix: string, userId: number, clientSubscriptionId: string) => `${prefix}:chat-active:${userId}:${clientSubscriptionId}`;

/**
 * aiAction(chat): validates, stores the user's message with its context items, echoes it to
 * subscribers and enqueues the answer. No model is called here; /reset and /clear enqueue nothing.
 */
export async function submitChat(options: SubmitChatOptions): Promise<SubmitChatResult> {
  const { prisma, viewer, request } = options;
  if (!options.access.chatAvailable) throw forbidden('Duo Chat is not available to you: it needs a GitLab Duo Pro or Duo Enterprise seat');
  const content = request.content.trim();
  if (!content) throw badInput("content can't be blank", 'content');
  if (request.content.length > CURRENT_FILE_LIMIT) throw badInput(`content is too long (maximum is ${CURRENT_FILE_LIMIT} characters)`, 'content');
  checkCurrentFile(request.currentFile);
  const contextItems = validateContextItems(request.additionalContext, options.access.chatContextCategories);
  const projectId = await readableProjectId(prisma, viewer, request.projectId);
  // Repository and directory context: nothing about a project's code goes anywhere unless the user may use it.
  await authorizeCodebaseItems({ prisma, viewer, access: options.access, items: contextItems, requestProjectId: projectId });
  const resourceId = await readableResource(prisma, viewer, request.resourceId);
  const threadId = await resolveThread(prisma, viewer.user.id, request, content);
  const conversation = { userId: viewer.user.id, threadId };
  const requestId = randomUUID();

  if (SLASH_CLEAR.includes(content)) {
    await clearConversation(prisma, conversation);
    return { requestId, threadId };
  }
  const message = await createUserMessage(prisma, {
    ...conversation,
    requestId,
    content: request.content,
    contextItems,
    clientSubscriptionId: request.clientSubscriptionId,
    platformOrigin: request.platformOrigin,
    agentVersionId: request.agentVersionId ? toGlobalId(request.agentVersionId.model, request.agentVersionId.id) : null,
    resourceId,
    projectId,
  });
  const topicSource = { userId: viewer.user.id, clientSubscriptionId: request.clientSubscriptionId, resourceId, agentVersionId: message.agentVersionId };
  // Sent now, awaited with what follows: commands on the one Redis connection keep their order, so
  // the echo still reaches subscribers before anything published after it, one round trip sooner.
  const echoed = options.events.publish(viewer.user.id, { message, topics: topicsFor(topicSource, 'user-echo') });
  echoed.catch(() => undefined); // awaited below; this only keeps an early throw from leaving it unhandled
  if (content === SLASH_RESET) {
    await echoed;
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
  } else if (options.gatekeeper && !request.skipGatekeeper && !content.startsWith('/')) {
    const verdict = options.gatekeeper(content);
    const answer = gateAnswer(verdict);
    const gatekeeper = { status: verdict.status, intent: verdict.intent, confidence: verdict.confidence, intents: verdict.intents.map((part) => part.intent) };
    if (answer) {
      await echoed;
      const { event } = await saveAssistantMessage(prisma, {
        ...conversation,
        requestId,
        content: answer,
        errors: [],
        extras: { sources: [], contextItemIds: contextItems.map((item) => item.id), gatekeeper },
        agentVersionId: message.agentVersionId,
        clientSubscriptionId: request.clientSubscriptionId,
      });
      if (request.clientSubscriptionId) {
        await options.events.publish(viewer.user.id, { message: { ...event, id: null, chunkId: 1 }, topics: topicsFor(topicSource, 'chunk') });
      }
      await options.events.publish(viewer.user.id, { message: event, topics: topicsFor(topicSource, 'final') });
      options.onGatekeeperSaved?.({ requestId, status: verdict.status });
      return { requestId, threadId };
    }
    intent = verdict.intent;
  }

  if (request.clientSubscriptionId) {
    // A newer request on the same client subscription supersedes one still streaming (sent in order, awaited together).
    await Promise.all([
      options.redis.set(activeRequestKey(options.redisPrefix, viewer.user.id, request.clientSubscriptionId), requestId, 'EX', 3600),
      options.events.publishCancel({ userId: viewer.user.id, clientSubscriptionId: request.clientSubscriptionId, supersededBy: requestId }),
    ]);
  }
  await Promise.all([echoed, options.queues.enqueueChat({ requestId, userId: viewer.user.id, currentFile: request.currentFile, promptRequestId, intent })]);
  return { requestId, threadId };
}

function checkCurrentFile(file: ChatRequest['currentFile']): void {
  if (!file) return;
  if (file.fileName.length > 255) throw badInput('currentFile.fileName is too long (maximum is 255 characters)', 'currentFile.fileName');
  for (const field of ['selectedText', 'contentAboveCursor', 'contentBelowCursor'] as const) {
    if ((file[field]?.length ?? 0) > CURRENT_FILE_LIMIT) throw badInput(`currentFile.${field} is too long (maximum is ${CURRENT_FILE_LIMIT} characters)`, `currentFile.${field}`);
  }
}

async function readableProjectId(prisma: PrismaClient, viewer: Viewer, projectId: GlobalId | null): Promise<number | null> {
  if (!projectId) return null;
  const id = numericId(projectId);
  const project = id === null ? null : await findReadableProject(prisma, viewer, { id });
  if (!project) throw new AppError({ code: 'NOT_FOUND', userMessage: NOT_AVAILABLE, field: 'projectId' });
  return project.id;
}

/** Only projects are resources here; anything else, missing or hidden, gets the same answer. */
async function readableResource(prisma: PrismaClient, viewer: Viewer, resourceId: GlobalId | null): Promise<string | null> {
  if (!resourceId) return null;
  if (resourceId.model === 'User' && numericId(resourceId) === viewer.user.id) return toGlobalId('User', viewer.user.id);
  const id = resourceId.model === 'Project' ? numericId(resourceId) : null;
  const project = id === null ? null : await findReadableProject(prisma, viewer, { id });
  if (!project) throw new AppError({ code: 'NOT_FOUND', userMessage: NOT_AVAILABLE, field: 'resourceId' });
  return toGlobalId('Project', project.id);
}

async function resolveThread(prisma: PrismaClient, userId: number, request: ChatRequest, content: string): Promise<number | null> {
  if (request.threadId) {
    const id = numericId(request.threadId);
    const thread = id === null ? null : await prisma.aiConversationThread.findFirst({ where: { id, userId } });
    if (!thread || Date.now() - thread.lastUpdatedAt.getTime() > THREAD_MAX_AGE_MS) throw badInput('Thread not found. It may have expired.', 'threadId');
    return thread.id;
  }
  if (!request.conversationType || request.conversationType === 'duo_chat_legacy') return null;
  const thread = await prisma.aiConversationThread.create({
    data: { userId, conversationType: request.conversationType, title: content.split('\n')[0]!.slice(0, 80) },
  });
  return thread.id;
}
