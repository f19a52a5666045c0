import type { Redis } from 'ioredis';
import type { LlmConfig } from '../config';
import type { PrismaClient } from '../db/prisma';
import type { Logger } from '../logger';
import { streamWithRetry } from '../llm/stream-with-retry';
import { LlmError, type LlmProvider } from '../llm/types';
import type { ChatJob } from '../queues';
import { buildPrompt } from './build-prompt';
import type { ChatEventBus, ChatMessageEvent } from './chat-events';
import type { GenerationRegistry } from './generation-registry';
import { conversationHistory, findAnswer, findUserMessage, saveAssistantMessage, toChatEvent } from './messages.service';
import { activeRequestKey } from './submit-chat';
import { topicsFor, type TopicSource } from './topics';

export type CompleteChatOptions = {
  prisma: PrismaClient;
  redis: Redis;
  redisPrefix: string;
  events: ChatEventBus;
  registry: GenerationRegistry;
  /** Null when no model is configured: the answer then says how to configure one. */
  llm: LlmProvider | null;
  llmConfig: Pick<LlmConfig, 'maxRetries'>;
  logger: Logger;
  job: ChatJob & { jobId?: string };
};

export type CompleteChatOutcome = 'answered' | 'already-answered' | 'superseded' | 'missing';

/** GitLab's chat error codes and the words its clients show for them. */
export const CHAT_ERRORS = {
  A1000: "I'm sorry, I couldn't respond in time. Please try again.",
  A1001: "I'm sorry, I can't generate a response. The language model could not be reached. Please try again.",
  A1005: "I'm sorry, you've entered too many prompts. Please run /clear or /reset before asking the next question.",
  A9999: "I'm sorry, I can't generate a response. Please try again.",
} as const;
export type ChatErrorCode = keyof typeof CHAT_ERRORS;

export function errorCodeFor(error: unknown): ChatErrorCode {
  if (!(error instanceof LlmError)) return 'A9999';
  if (error.kind === 'timeout') return 'A1000';
  if (error.kind === 'connection') return 'A1001';
  if (error.kind === 'prompt_too_long') return 'A1005';
  return 'A9999';
}

export function noModelAnswer(contextItemCount: number): string {
  return [
    'No language model is configured for this duo-slice instance, so I cannot answer yet.',
    'An administrator can set `LLM_PROVIDER` (`openai` for any OpenAI-compatible server such as vLLM, Ollama or llama.cpp, or `anthropic`), `LLM_MODEL`, `LLM_BASE_URL` and `LLM_API_KEY`, then restart the service.',
    contextItemCount > 0 ? `Your message and its ${contextItemCount} context item${contextItemCount === 1 ? '' : 's'} were received and stored.` : 'Your message was received and stored.',
  ].join('\n\n');
}

/**
 * The completion worker's work for one request: builds the prompt, streams the answer as
 * numbered chunks to the client subscription, then stores the final message and publishes it.
 * Idempotent: a request that already has an answer is answered again from storage, never twice.
 */
export async function completeChat(options: CompleteChatOptions): Promise<CompleteChatOutcome> {
  const { prisma, job, logger } = options;
  const existing = await findAnswer(prisma, job.requestId);
  const userRecord = await findUserMessage(prisma, { userId: job.userId, requestId: job.requestId });
  if (!userRecord) return 'missing';
  const source: TopicSource = {
    userId: job.userId,
    clientSubscriptionId: userRecord.clientSubscriptionId,
    resourceId: userRecord.resourceId,
    agentVersionId: userRecord.agentVersionId,
  };
  if (existing) {
    // A retry after a crash between storing and publishing: deliver the stored answer, do not make another.
    await options.events.publish(job.userId, { message: existing, topics: topicsFor(source, 'final') });
    return 'already-answered';
  }
  if (await isSuperseded(options, userRecord.clientSubscriptionId)) return 'superseded';

  // After a confirmation the prompt to answer is the one the user confirmed, with its context.
  const promptRecord = job.promptRequestId ? await findUserMessage(prisma, { userId: job.userId, requestId: job.promptRequestId }) : userRecord;
  const question = toChatEvent(promptRecord ?? userRecord);
  const generation = options.registry.start({ userId: job.userId, clientSubscriptionId: userRecord.clientSubscriptionId, requestId: job.requestId });
  try {
    const excluded = [job.requestId, ...(job.promptRequestId ? [job.promptRequestId] : [])];
    const history = await conversationHistory(prisma, { userId: job.userId, threadId: userRecord.threadId }, excluded);
    const prompt = buildPrompt({ question: question.content, contextItems: question.contextItems, currentFile: job.currentFile ?? null, history, intent: job.intent ?? null });
    let chunkId = 0;
    const publishChunk = async (text: string) => {
      if (generation.signal.aborted || !text || !source.clientSubscriptionId) return;
      chunkId += 1;
      const chunk: ChatMessageEvent = { ...baseAnswer(question), content: text, chunkId };
      await options.events.publish(job.userId, { message: chunk, topics: topicsFor(source, 'chunk') });
    };

    let content = '';
    let errors: string[] = [];
    if (!options.llm) {
      content = noModelAnswer(question.contextItems.length);
      await publishChunk(content);
    } else {
      try {
        const stream = streamWithRetry({
          provider: options.llm,
          request: { messages: prompt.messages, signal: generation.signal },
          maxRetries: options.llmConfig.maxRetries,
          onRetry: ({ attempt, error, delayMs }) =>
            logger.warn({ event: 'llm_retry', requestId: job.requestId, jobId: job.jobId, attempt, status: error.status, kind: error.kind, delayMs }, 'retrying the model'),
        });
        for await (const event of stream) {
          if (generation.signal.aborted) break;
          if (event.type === 'text-delta') {
            content += event.text;
            await publishChunk(event.text);
          }
        }
      } catch (error) {
        if (generation.signal.aborted) return 'superseded';
        const code = errorCodeFor(error);
        logger.warn({ event: 'chat_completion_failed', requestId: job.requestId, jobId: job.jobId, code, err: error }, 'chat answer failed');
        content = `${CHAT_ERRORS[code]} Error code: ${code}`;
        errors = [content];
      }
    }
    if (generation.signal.aborted) {
      logger.info({ event: 'chat_superseded', requestId: job.requestId, jobId: job.jobId }, 'a newer request superseded this answer');
      return 'superseded';
    }
    const { event } = await saveAssistantMessage(prisma, {
      userId: job.userId,
      threadId: userRecord.threadId,
      requestId: job.requestId,
      content,
      errors,
      extras: { sources: [], contextItemIds: question.contextItems.map((item) => item.id) },
      agentVersionId: userRecord.agentVersionId,
      clientSubscriptionId: userRecord.clientSubscriptionId,
    });
    await options.events.publish(job.userId, { message: event, topics: topicsFor(source, 'final') });
    return 'answered';
  } finally {
    generation.release();
  }
}

function baseAnswer(question: ChatMessageEvent): ChatMessageEvent {
  return {
    id: null,
    requestId: question.requestId,
    role: 'assistant',
    content: '',
    timestamp: new Date().toISOString(),
    chunkId: null,
    errors: [],
    extras: {},
    threadId: question.threadId,
    agentVersionId: question.agentVersionId,
    contextItems: [],
  };
}

async function isSuperseded(options: CompleteChatOptions, clientSubscriptionId: string | null): Promise<boolean> {
  if (!clientSubscriptionId) return false;
  const active = await options.redis.get(activeRequestKey(options.redisPrefix, options.job.userId, clientSubscriptionId));
  return active !== null && active !== options.job.requestId;
}

