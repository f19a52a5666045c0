import type { Redis } from 'ioredis';
import type { ContextCategory, LlmConfig } from '../config';
import { resolveDuoAccess } from '../auth/duo-access';
import type { Embedder } from '../llm/embedders/embedder';
import type { Reranking } from '../llm/rerankers/reranker';
import type { Queues } from '../queues';
import { groundCodebaseItems } from './codebase-context';
import type { CodeSource, ToolResult } from '../tools/semantic-search.tool';
import { answerFromSearch } from './search-answer';
import { CONVERSATION } from '../gatekeeper/conversation';
import { conversationAnswer } from './conversation-answer';
import { markdownText } from './markdown-text';
import type { ContextItem } from './context-items';
import type { PrismaClient } from '../db/prisma';
import type { Logger } from '../logger';
import { observeChatAnswer, observeChatFirstChunk } from '../metrics/record';
import { streamWithRetry } from '../llm/stream-with-retry';
import { LlmError, type LlmProvider } from '../llm/types';
import type { ChatJob } from '../queues';
import { buildPrompt, type CurrentFile } from './build-prompt';
import { commandQuestion, commandTarget, parseSlashCommand } from './slash-commands';
import type { ChatEventBus, ChatMessageEvent } from './chat-events';
import type { GenerationRegistry } from './generation-registry';
import { conversationHistory, findRequest, findUserMessage, saveAssistantMessage, toChatEvent } from './messages.service';
import { activeChatRequestKey } from '../redis-keys';
import { topicsFor, type TopicSource } from './topics';
import { numericIdOf } from '../global-id';

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
  /** What repository and directory context needs: the Semantic Search Tool runs before the model. */
  codebase: CodebaseDependencies;
};

export type CodebaseDependencies = {
  queues: Pick<Queues, 'enqueueIndex'>;
  embedder: Embedder;
  /** RERANK_PROVIDER's reranker of the code found, or none. */
  reranking?: Reranking | null;
  /** DATA_DIR: a ref other than the default branch is looked up in the repository before indexing starts for it. */
  dataDir: string;
  /** DUO_DISABLED_CONTEXT_CATEGORIES: access is checked again in the worker. */
  disabledCategories: readonly ContextCategory[];
  /** CHAT_INDEX_WAIT_MS: how long an answer waits for the first index of a repository it was asked about. Default 0. */
  indexWaitMs?: number;
};

/** At most one streamed indexing status this often: each is a line of the streamed text. */
const STATUS_EVERY_MS = 2_000;

/** How a chat job ended: an answer stored (by what it holds: the metric's outcome), or why none was. */
export type CompleteChatOutcome =
  'answered' | 'error' | 'no_model' | 'codebase_unavailable' | 'already-answered' | 'superseded' | 'missing';

/** GitLab's chat error codes and the words its clients show for them. */
export const CHAT_ERRORS = {
  A1000: "I'm sorry, I couldn't respond in time. Please try again.",
  A1001: "I'm sorry, I can't generate a response. The language model could not be reached. Please try again.",
  A1005: "I'm sorry, you've entered too many prompts. Please run /clear or /reset before asking the next question.",
  A9999: "I'm sorry, I can't generate a response. Please try again.",
} as const;
export type ChatErrorCode = keyof typeof CHAT_ERRORS;

/** A failed answer's text, as stored and shown: GitLab's words for the code, then the code. */
export function chatErrorText(code: ChatErrorCode): string {
  return `${CHAT_ERRORS[code]} Error code: ${code}`;
}

export function errorCodeFor(error: unknown): ChatErrorCode {
  if (!(error instanceof LlmError)) return 'A9999';
  if (error.kind === 'timeout') return 'A1000';
  if (error.kind === 'connection') return 'A1001';
  if (error.kind === 'prompt_too_long') return 'A1005';
  return 'A9999';
}

const NO_MODEL_HINT =
  'For a written answer, an administrator can configure a language model: `LLM_PROVIDER`, `LLM_MODEL`, `LLM_BASE_URL` and `LLM_API_KEY`.';

export function noModelAnswer(contextItemCount: number): string {
  return [
    'No language model is configured for this duo-slice instance, so I cannot answer yet.',
    'An administrator can set `LLM_PROVIDER` (`openai` for any OpenAI-compatible server such as vLLM, Ollama or llama.cpp, or ' +
      '`anthropic`), `LLM_MODEL`, `LLM_BASE_URL` and `LLM_API_KEY`, then restart the service.',
    contextItemCount > 0
      ? `Your message and its ${contextItemCount} context item${contextItemCount === 1 ? '' : 's'} were received and stored.`
      : 'Your message was received and stored.',
  ].join('\n\n');
}

/**
 * The completion worker's work for one request: builds the prompt, streams the answer as
 * numbered chunks to the client subscription, then stores the final message and publishes it.
 * Idempotent: a request that already has an answer is answered again from storage, never twice.
 */
export async function completeChat(options: CompleteChatOptions): Promise<CompleteChatOutcome> {
  const { prisma, job, logger } = options;
  const { userMessage: userRecord, answer: existing } = await findRequest(prisma, { userId: job.userId, requestId: job.requestId });
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
  const promptRecord = job.promptRequestId
    ? await findUserMessage(prisma, { userId: job.userId, requestId: job.promptRequestId })
    : userRecord;
  const question = toChatEvent(promptRecord ?? userRecord);
  const generation = options.registry.start({
    userId: job.userId,
    clientSubscriptionId: userRecord.clientSubscriptionId,
    requestId: job.requestId,
  });
  try {
    const excluded = [job.requestId, ...(job.promptRequestId ? [job.promptRequestId] : [])];
    const history = await conversationHistory(prisma, { userId: job.userId, threadId: userRecord.threadId }, excluded);
    const asked = promptRecord ?? userRecord;
    const resourceProject = numericIdOf('Project', asked.resourceId ?? '');
    let chunkId = 0;
    const publishChunk = async (text: string) => {
      if (generation.signal.aborted || !text || !source.clientSubscriptionId) return;
      chunkId += 1;
      if (chunkId === 1) observeChatFirstChunk(userRecord.createdAt);
      const chunk: ChatMessageEvent = { ...baseAnswer(question), content: text, chunkId };
      await options.events.publish(job.userId, { message: chunk, topics: topicsFor(source, 'chunk') });
    };
    // While the answer waits for a first index, the run's progress streams as the answer's first
    // lines (the final message, which replaces the chunks, is the answer alone).
    let lastStatus = 0;
    const publishStatus = async (status: string) => {
      if (Date.now() - lastStatus < STATUS_EVERY_MS) return;
      lastStatus = Date.now();
      await publishChunk(`_${status}_\n\n`);
    };
    const grounding = await groundQuestion(options, {
      question,
      projectId: asked.projectId ?? resourceProject,
      onIndexProgress: publishStatus,
      signal: generation.signal,
    });
    const prompt = buildPrompt({
      question: promptQuestion({ content: question.content, currentFile: job.currentFile ?? null, contextItems: grounding.items }),
      contextItems: grounding.items,
      currentFile: job.currentFile ?? null,
      history,
      intent: job.intent ?? null,
    });

    // The repository is still being indexed: the answer goes without its code, and says so first.
    let content = grounding.notice ? `${grounding.notice}\n\n` : '';
    if (content) await publishChunk(content);
    let errors: string[] = [];
    let errorCode: ChatErrorCode | null = null;
    if (grounding.unavailable) {
      // Every codebase search came back without code (not indexed yet, failed, no access): say
      // why instead of letting the model answer as if it had looked.
      content = grounding.unavailable;
      await publishChunk(content);
    } else if (!options.llm && job.intent === CONVERSATION) {
      content = conversationAnswer({ projectPath: await projectPathOf(prisma, asked.projectId ?? resourceProject) });
      await publishChunk(content);
    } else if (!options.llm) {
      // Without a model, repository or directory context is still answered: with what search found.
      const found = answerFromSearch(grounding.results, { modelHint: NO_MODEL_HINT }) ?? noModelAnswer(question.contextItems.length);
      content += found;
      await publishChunk(found);
    } else {
      try {
        const stream = streamWithRetry({
          provider: options.llm,
          request: { messages: prompt.messages, signal: generation.signal },
          maxRetries: options.llmConfig.maxRetries,
          onRetry: ({ attempt, error, delayMs }) =>
            logger.warn(
              { event: 'llm_retry', requestId: job.requestId, jobId: job.jobId, attempt, status: error.status, kind: error.kind, delayMs },
              'retrying the model',
            ),
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
        errorCode = code;
        logger.warn(
          { event: 'chat_completion_failed', requestId: job.requestId, jobId: job.jobId, code, err: error },
          'chat answer failed',
        );
        content = chatErrorText(code);
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
      extras: { sources: grounding.sources, contextItemIds: question.contextItems.map((item) => item.id) },
      agentVersionId: userRecord.agentVersionId,
      clientSubscriptionId: userRecord.clientSubscriptionId,
    });
    await options.events.publish(job.userId, { message: event, topics: topicsFor(source, 'final') });
    const outcome = grounding.unavailable ? 'codebase_unavailable' : !options.llm ? 'no_model' : errorCode ? 'error' : 'answered';
    observeChatAnswer({ outcome, errorCode, askedAt: userRecord.createdAt });
    return outcome;
  } finally {
    generation.release();
  }
}

/**
 * The answer to a request whose job failed for good (its last attempt, or an error no retry helps):
 * GitLab's A9999 error, stored and published as any answer, so the client's subscription ends and
 * the history holds no question nobody answered. False when the request is unknown or has its
 * answer already. A failure to publish is logged: the answer is stored.
 */
export async function answerFailedRequest(
  options: Pick<CompleteChatOptions, 'prisma' | 'events' | 'logger'> & { userId: number; requestId: string },
): Promise<boolean> {
  const { prisma, userId, requestId } = options;
  const { userMessage, answer } = await findRequest(prisma, { userId, requestId });
  if (!userMessage || answer) return false;
  const failed = chatErrorText('A9999');
  const { event, created } = await saveAssistantMessage(prisma, {
    userId,
    threadId: userMessage.threadId,
    requestId,
    content: failed,
    errors: [failed],
    extras: { sources: [], contextItemIds: toChatEvent(userMessage).contextItems.map((item) => item.id) },
    agentVersionId: userMessage.agentVersionId,
    clientSubscriptionId: userMessage.clientSubscriptionId,
  });
  const source: TopicSource = {
    userId,
    clientSubscriptionId: userMessage.clientSubscriptionId,
    resourceId: userMessage.resourceId,
    agentVersionId: userMessage.agentVersionId,
  };
  await options.events.publish(userId, { message: event, topics: topicsFor(source, 'final') }).catch((error: unknown) => {
    options.logger.warn({ event: 'chat_failure_unpublished', requestId, err: error }, 'could not publish the failed answer');
  });
  if (created) observeChatAnswer({ outcome: 'error', errorCode: 'A9999', askedAt: userMessage.createdAt });
  return created;
}

type GroundedQuestion = {
  items: ContextItem[];
  sources: CodeSource[];
  /** What each codebase search gave (none when no search ran). */
  results: ToolResult[];
  /** Set when codebase context was asked for and none of it could be searched: the answer to give. */
  unavailable: string | null;
  /** Set when the repository asked about is still being indexed: said before an answer given without its code. */
  notice: string | null;
};

/**
 * Repository and directory items always run the Semantic Search Tool; so does a question the
 * gatekeeper reads as CODEBASE_SEARCH asked with a project (its default branch).
 */
async function groundQuestion(
  options: CompleteChatOptions,
  input: {
    question: ChatMessageEvent;
    projectId: number | null;
    onIndexProgress: (status: string) => Promise<void>;
    signal: AbortSignal;
  },
): Promise<GroundedQuestion> {
  const { prisma, job } = options;
  let items = input.question.contextItems;
  // A greeting or a question about the assistant asks nothing of the code: no search is run for it.
  if (job.intent === CONVERSATION) return { items, sources: [], results: [], unavailable: null, notice: null };
  const asksCodebase = items.some((item) => item.category === 'repository' || item.category === 'directory');
  const implied = !asksCodebase && job.intent === 'CODEBASE_SEARCH' && input.projectId !== null;
  if (!asksCodebase && !implied) return { items, sources: [], results: [], unavailable: null, notice: null };
  const user = await prisma.user.findUnique({ where: { id: job.userId } });
  // A user blocked (or gone) since asking reads no code: their tokens no longer hold, so neither does their access.
  if (!user || user.state !== 'active') return { items, sources: [], results: [], unavailable: null, notice: null };
  const viewer = { user, token: { id: 0, scopes: ['api' as const] } };
  const access = await resolveDuoAccess({ prisma, userId: user.id, disabledCategories: options.codebase.disabledCategories });
  if (implied) {
    items = [
      ...items,
      {
        id: String(input.projectId),
        category: 'repository',
        content: '',
        metadata: null,
        schemaVersion: 'v0.0.1',
        type: null,
        isEnabled: true,
        disabledReasons: [],
      },
    ];
  }
  const grounding = await groundCodebaseItems({
    ...options.codebase,
    prisma,
    logger: options.logger,
    viewer,
    access,
    items,
    requestProjectId: input.projectId,
    question: input.question.content,
    requestId: job.requestId,
    // Only a repository the user asked about is waited for: an implied one is searched if it is ready.
    wait: implied ? undefined : { timeoutMs: options.codebase.indexWaitMs ?? 0, onProgress: input.onIndexProgress, signal: input.signal },
  });
  if (implied && grounding.results.every((result) => result.status !== 'ok')) {
    // The user did not ask for the repository: without an index the question is answered as it is.
    return { items: input.question.contextItems, sources: [], results: [], unavailable: null, notice: null };
  }
  const none = grounding.results.length > 0 && grounding.results.every((result) => result.status !== 'ok');
  // The reasons name projects, refs, directories and an index's last error: text, never Markdown.
  const words = grounding.results.map((result) => markdownText(result.content)).join('\n\n');
  // Code still being indexed is no reason to leave the question unanswered: it is answered without it.
  const indexing = none && grounding.results.every((result) => result.indexing);
  return {
    items: grounding.items,
    sources: grounding.sources,
    results: grounding.results,
    unavailable: none && !indexing ? words : null,
    notice: indexing ? words : null,
  };
}

/** A code slash command becomes its task on what it works on; any other question goes as it is. */
function promptQuestion(options: { content: string; currentFile: CurrentFile | null; contextItems: ContextItem[] }): string {
  const slash = parseSlashCommand(options.content);
  if (slash?.command.kind !== 'code') return options.content;
  const target = commandTarget({ input: slash.input, currentFile: options.currentFile, contextItems: options.contextItems });
  return target ? commandQuestion(slash, target) : options.content;
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

async function projectPathOf(prisma: PrismaClient, projectId: number | null): Promise<string | null> {
  if (projectId === null) return null;
  return (await prisma.project.findUnique({ where: { id: projectId }, select: { fullPath: true } }))?.fullPath ?? null;
}

async function isSuperseded(options: CompleteChatOptions, clientSubscriptionId: string | null): Promise<boolean> {
  if (!clientSubscriptionId) return false;
  const active = await options.redis.get(activeChatRequestKey(options.redisPrefix, options.job.userId, clientSubscriptionId));
  return active !== null && active !== options.job.requestId;
}
