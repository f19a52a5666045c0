import { randomUUID } from 'node:crypto';
import type { ContextCategory } from '../config';
import { hasPool, queryRows } from '../db/bulk-sql';
import { turnBatch } from '../turn-batch';
import { isUniqueViolation } from '../db/errors';
import { isUuid } from '../validation';
import { Prisma, type PrismaClient } from '../db/prisma';
import type { ChatMessageEvent } from './chat-events';
import type { ContextItem } from './context-items';
import { MARKDOWN_VERSION, renderMarkdown } from './render-markdown';

export type ConversationType = 'duo_chat_legacy' | 'duo_code_review' | 'duo_quick_chat' | 'duo_chat';

const WITH_ITEMS = { contextItems: { orderBy: { position: 'asc' } } } as const;
type MessageWithItems = Prisma.AiMessageGetPayload<{ include: typeof WITH_ITEMS }>;

/** A message just created without context items, in the shape a read with its items has. */
const withoutItems = (record: Omit<MessageWithItems, 'contextItems'>): MessageWithItems => ({ ...record, contextItems: [] });

type NewMessageRow = {
  userId: number;
  threadId: number | null;
  requestId: string;
  role: 'user' | 'assistant';
  content: string;
  errors: string[];
  extras: Record<string, unknown>;
  clientSubscriptionId: string | null;
  platformOrigin: string | null;
  agentVersionId: string | null;
  resourceId: string | null;
  projectId: number | null;
  /** The content rendered to HTML now, stored with the renderer's version; null when it is not (rendered when read). */
  contentHtml: string | null;
};

/** Every column of an ai_messages row `m`, under the names Prisma gives them (raw reads and RETURNING). */
const MESSAGE_COLUMNS = Prisma.raw(
  'm.id::text AS id, m.user_id AS "userId", m.thread_id AS "threadId", m.request_id::text AS "requestId", m.role::text AS role, ' +
    'm.content, m.errors, m.extras, m.ai_action AS "aiAction", m.client_subscription_id AS "clientSubscriptionId", ' +
    'm.platform_origin AS "platformOrigin", m.agent_version_id AS "agentVersionId", m.resource_id AS "resourceId", ' +
    'm.project_id AS "projectId", m.has_feedback AS "hasFeedback", m.created_at AS "createdAt", m.content_html AS "contentHtml", ' +
    'm.cached_markdown_version AS "cachedMarkdownVersion"',
);

/** The context items of the row `m` as one JSON array, in position order, under the names Prisma gives them. */
const CONTEXT_ITEMS = Prisma.raw(`COALESCE((
        SELECT jsonb_agg(jsonb_build_object('id', i.id, 'messageId', i.message_id, 'position', i.position, 'itemId', i.item_id,
          'category', i.category, 'content', i.content, 'metadata', i.metadata, 'schemaVersion', i.schema_version,
          'itemType', i.item_type, 'isEnabled', i.is_enabled, 'disabledReasons', i.disabled_reasons) ORDER BY i.position)
        FROM ai_message_context_items i WHERE i.message_id = m.id
      ), '[]'::jsonb) AS "contextItems"`);

/** A message row with the values taken when it was asked for (its UUID, its time), ready to insert. */
type MessageRowToInsert = NewMessageRow & { id: string; createdAt: Date };

/**
 * One message without context items as a raw INSERT … RETURNING of every column, under the names
 * Prisma's create returns them. Prisma's create of the same row cost about 1.05 ms of CPU against
 * 0.66 ms for this (measured alone), and every aiAction makes two (the question in the API, the
 * answer in the worker). The values are Prisma's: a new UUID, the time taken here (as @default(now())
 * does, not the database's clock), the columns' defaults for the rest. On the pool, the messages
 * asked for in one turn of the event loop are stored by one statement (insertMessages, turnBatch).
 */
async function insertMessage(client: Prisma.TransactionClient, row: NewMessageRow): Promise<MessageWithItems> {
  const toInsert = { ...row, id: randomUUID(), createdAt: new Date() };
  if (!hasPool(client)) return insertOneMessage(client, toInsert);
  let batch = insertBatches.get(client);
  if (!batch) {
    batch = turnBatch({ runOne: (one) => insertOneMessage(client, one), runMany: (many) => insertMessages(client, many) });
    insertBatches.set(client, batch);
  }
  return batch(toInsert);
}

const insertBatches = new WeakMap<object, (row: MessageRowToInsert) => Promise<MessageWithItems>>();

async function insertOneMessage(client: Prisma.TransactionClient, row: MessageRowToInsert): Promise<MessageWithItems> {
  const [record] = await queryRows<Omit<MessageWithItems, 'contextItems'>>(
    client,
    Prisma.sql`
    INSERT INTO ai_messages AS m (id, user_id, thread_id, request_id, role, content, errors, extras, client_subscription_id,
      platform_origin, agent_version_id, resource_id, project_id, created_at, content_html, cached_markdown_version)
    VALUES (${row.id}::uuid, ${row.userId}, ${row.threadId}, ${row.requestId}::uuid, ${row.role}::ai_message_role,
      ${row.content}, ${row.errors}::text[], ${JSON.stringify(row.extras)}::jsonb, ${row.clientSubscriptionId},
      ${row.platformOrigin}, ${row.agentVersionId}, ${row.resourceId}, ${row.projectId}, ${row.createdAt}::timestamptz,
      ${row.contentHtml}, ${markdownVersionOf(row)}::int)
    RETURNING ${MESSAGE_COLUMNS}`,
  );
  return withoutItems(record);
}

/**
 * Several messages in one INSERT … SELECT FROM unnest(…) RETURNING, one fixed (prepared) text
 * whatever their number: one statement, one commit. Each row's errors travel as a JSON array (an
 * array of text arrays cannot be unnested row by row). Rows are matched to inputs by their id.
 */
async function insertMessages(client: Prisma.TransactionClient, rows: MessageRowToInsert[]): Promise<MessageWithItems[]> {
  const column = <Value>(pick: (row: MessageRowToInsert) => Value) => rows.map(pick);
  const records = await queryRows<Omit<MessageWithItems, 'contextItems'>>(
    client,
    Prisma.sql`
    INSERT INTO ai_messages AS m (id, user_id, thread_id, request_id, role, content, errors, extras, client_subscription_id,
      platform_origin, agent_version_id, resource_id, project_id, created_at, content_html, cached_markdown_version)
    SELECT r.id, r.user_id, r.thread_id, r.request_id, r.role, r.content, ARRAY(SELECT jsonb_array_elements_text(r.errors)), r.extras,
      r.client_subscription_id, r.platform_origin, r.agent_version_id, r.resource_id, r.project_id, r.created_at, r.content_html,
      r.cached_markdown_version
    FROM unnest(${column((row) => row.id)}::uuid[], ${column((row) => row.userId)}::int[], ${column((row) => row.threadId)}::int[],
      ${column((row) => row.requestId)}::uuid[], ${column((row) => row.role)}::ai_message_role[], ${column((row) => row.content)}::text[],
      ${column((row) => JSON.stringify(row.errors))}::jsonb[], ${column((row) => JSON.stringify(row.extras))}::jsonb[],
      ${column((row) => row.clientSubscriptionId)}::text[], ${column((row) => row.platformOrigin)}::text[],
      ${column((row) => row.agentVersionId)}::text[], ${column((row) => row.resourceId)}::text[], ${column((row) => row.projectId)}::int[],
      ${column((row) => row.createdAt)}::timestamptz[], ${column((row) => row.contentHtml)}::text[],
      ${column(markdownVersionOf)}::int[])
      AS r(id, user_id, thread_id, request_id, role, content, errors, extras, client_subscription_id, platform_origin,
        agent_version_id, resource_id, project_id, created_at, content_html, cached_markdown_version)
    RETURNING ${MESSAGE_COLUMNS}`,
  );
  const byId = new Map(records.map((record) => [record.id, record]));
  return rows.map((row) => withoutItems(byId.get(row.id)!));
}

/** The version stored beside a row's rendering: the renderer's, or none when there is no rendering. */
const markdownVersionOf = (row: Pick<NewMessageRow, 'contentHtml'>) => (row.contentHtml === null ? null : MARKDOWN_VERSION);

/** Where a message belongs: a thread, or the user's legacy (thread-less) conversation. */
export type Conversation = { userId: number; threadId: number | null };

export function toChatEvent(record: MessageWithItems): ChatMessageEvent {
  const extras = (record.extras ?? {}) as ChatMessageEvent['extras'];
  const contextItems: ContextItem[] = record.contextItems.map((item) => ({
    id: item.itemId,
    category: item.category as ContextCategory,
    content: item.content,
    metadata: (item.metadata ?? null) as Record<string, unknown> | null,
    schemaVersion: item.schemaVersion,
    type: item.itemType,
    isEnabled: item.isEnabled,
    disabledReasons: item.disabledReasons,
  }));
  return {
    id: record.id,
    requestId: record.requestId,
    role: record.role,
    content: record.content,
    timestamp: record.createdAt.toISOString(),
    chunkId: null,
    errors: record.errors,
    extras: { ...extras, hasFeedback: record.hasFeedback, contextItemIds: extras.contextItemIds ?? contextItems.map((item) => item.id) },
    threadId: record.threadId,
    agentVersionId: record.agentVersionId,
    contextItems,
    // A rendering made by another version of the renderer is left out: the reader renders the content afresh.
    ...(record.contentHtml !== null && record.cachedMarkdownVersion === MARKDOWN_VERSION ? { contentHtml: record.contentHtml } : {}),
  };
}

export type NewUserMessage = Conversation & {
  requestId: string;
  content: string;
  contextItems: ContextItem[];
  clientSubscriptionId: string | null;
  platformOrigin: string | null;
  agentVersionId: string | null;
  resourceId: string | null;
  projectId: number | null;
  /** A thread to create for this first message (threadId is then null), in the same transaction. */
  newThread?: { conversationType: Exclude<ConversationType, 'duo_chat_legacy'>; title: string } | null;
};

/** Stores the user's message, its context items and its new thread (if any) together, or nothing. */
export async function createUserMessage(prisma: PrismaClient, message: NewUserMessage): Promise<ChatMessageEvent> {
  const data = (threadId: number | null) => ({
    id: randomUUID(),
    userId: message.userId,
    threadId,
    requestId: message.requestId,
    role: 'user' as const,
    content: message.content,
    clientSubscriptionId: message.clientSubscriptionId,
    platformOrigin: message.platformOrigin,
    agentVersionId: message.agentVersionId,
    resourceId: message.resourceId,
    projectId: message.projectId,
  });
  const create = async (client: Prisma.TransactionClient, threadId: number | null): Promise<MessageWithItems> => {
    // Without context items the message is one INSERT … RETURNING; Prisma would otherwise wrap a
    // nested create and its re-read (message, then items) in a transaction: five round trips.
    if (message.contextItems.length === 0) {
      const { id: _id, ...row } = data(threadId);
      // A question is rendered only if a reader asks for its HTML: most never are, and this is the request path.
      return insertMessage(client, { ...row, errors: [], extras: {}, contentHtml: null });
    }
    return client.aiMessage.create({
      data: {
        ...data(threadId),
        contextItems: {
          create: message.contextItems.map((item, position) => ({
            position,
            itemId: item.id,
            category: item.category,
            content: item.content,
            metadata: (item.metadata ?? undefined) as Prisma.InputJsonValue | undefined,
            schemaVersion: item.schemaVersion,
            itemType: item.type,
            isEnabled: item.isEnabled,
            disabledReasons: item.disabledReasons,
          })),
        },
      },
      include: WITH_ITEMS,
    });
  };
  // Without a thread, old or new, there is one write (Prisma keeps its nested item inserts
  // together): no interactive transaction, which costs a round trip each for BEGIN and COMMIT.
  if (message.threadId === null && !message.newThread) return toChatEvent(await create(prisma, null));
  const record = await prisma.$transaction(async (transaction) => {
    const threadId = message.newThread
      ? (await transaction.aiConversationThread.create({ data: { userId: message.userId, ...message.newThread }, select: { id: true } })).id
      : message.threadId;
    const created = await create(transaction, threadId);
    if (message.threadId !== null && !message.newThread) {
      await transaction.aiConversationThread.update({ where: { id: message.threadId }, data: { lastUpdatedAt: new Date() } });
    }
    return created;
  });
  return toChatEvent(record);
}

export type NewAssistantMessage = Conversation & {
  requestId: string;
  content: string;
  errors: string[];
  extras: ChatMessageEvent['extras'];
  agentVersionId: string | null;
  clientSubscriptionId: string | null;
};

/**
 * Stores the final answer to a request. At most one answer exists per request (a unique index): a
 * retried job that finds one already there gets that one back, so a request never has two answers.
 */
export async function saveAssistantMessage(
  prisma: PrismaClient,
  message: NewAssistantMessage,
): Promise<{ event: ChatMessageEvent; created: boolean }> {
  try {
    // An answer has no context items of its own: one INSERT … RETURNING, no re-read of items.
    const record = await insertMessage(prisma, {
      userId: message.userId,
      threadId: message.threadId,
      requestId: message.requestId,
      role: 'assistant',
      content: message.content,
      errors: message.errors,
      extras: message.extras,
      clientSubscriptionId: message.clientSubscriptionId,
      platformOrigin: null,
      agentVersionId: message.agentVersionId,
      resourceId: null,
      projectId: null,
      // Rendered once, as stored (mostly by the worker), rather than by every reader: web Duo Chat asks every
      // answer's contentHtml each time it opens a thread. A failed answer has none (GitLab's null). The
      // gatekeeper's answers, stored by the API, are the same few texts: the renderer's cache has them.
      contentHtml: message.errors.length === 0 ? renderMarkdown(message.content) : null,
    });
    return { event: toChatEvent(record), created: true };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const existing = await findAnswer(prisma, message.requestId);
    if (!existing) throw error;
    return { event: existing, created: false };
  }
}

export async function findAnswer(prisma: PrismaClient, requestId: string): Promise<ChatMessageEvent | null> {
  const record = await prisma.aiMessage.findFirst({ where: { requestId, role: 'assistant' }, include: WITH_ITEMS });
  return record ? toChatEvent(record) : null;
}

export async function findUserMessage(prisma: PrismaClient, options: { userId: number; requestId: string }) {
  return prisma.aiMessage.findFirst({ where: { userId: options.userId, requestId: options.requestId, role: 'user' }, include: WITH_ITEMS });
}

/**
 * What a chat job starts from, in one read: the user's message of the request (as
 * `findUserMessage`) and its answer if one is stored already (as `findAnswer`). On the pool, the
 * jobs that start in one turn of the event loop read theirs with one statement (turnBatch).
 */
export async function findRequest(
  prisma: PrismaClient,
  options: RequestKey,
): Promise<{ userMessage: MessageWithItems | null; answer: ChatMessageEvent | null }> {
  let batch = findRequestBatches.get(prisma);
  if (!batch) {
    batch = hasPool(prisma)
      ? turnBatch({
          runOne: (key) => readRequests(prisma, [key]),
          runMany: (keys) => readRequests(prisma, keys).then((found) => keys.map(() => found)),
        })
      : (key) => readRequests(prisma, [key]);
    findRequestBatches.set(prisma, batch);
  }
  const records = (await batch(options)).filter(
    (record) => record.requestId === options.requestId && (record.role === 'assistant' || record.userId === options.userId),
  );
  const answer = records.find((record) => record.role === 'assistant');
  return { userMessage: records.find((record) => record.role === 'user') ?? null, answer: answer ? toChatEvent(answer) : null };
}

type RequestKey = { userId: number; requestId: string };
const findRequestBatches = new WeakMap<object, (key: RequestKey) => Promise<MessageWithItems[]>>();

/**
 * The user messages and answers of the given requests, oldest first: the filter of
 * { requestId, OR: [{ role: 'assistant' }, { role: 'user', userId }] } for each key, the items in
 * position order under the names Prisma gives them. Raw SQL, one query: every chat job starts here,
 * and Prisma's findMany with its items (two queries, then the mapping) cost more CPU than the job's
 * other reads.
 */
async function readRequests(prisma: PrismaClient, keys: RequestKey[]): Promise<MessageWithItems[]> {
  return queryRows<MessageWithItems>(
    prisma,
    Prisma.sql`
    SELECT ${MESSAGE_COLUMNS}, ${CONTEXT_ITEMS}
    FROM ${requestRows(keys)}
    ORDER BY m.created_at ASC, m.id ASC`,
  );
}

/**
 * readRequests' rows `m`, each key's by an equality on its request id (the request index): one
 * key (most jobs start alone in their turn) as a plain filter, several as one lookup per key.
 *
 * Both are prepared, and neither lets a plan made on a small table outlive it. An equality's
 * generic plan costs the same as a custom one, so PostgreSQL keeps it, and it is the index at any
 * size. Several keys were once `request_id = ANY($1::uuid[])`: on a table never analyzed (these
 * machines run without autovacuum) the generic plan made while it held 20 to 200 rows was a
 * sequential scan, and PostgreSQL kept it as the conversation grew: 1.7 ms and 321 buffers a call
 * in the chat bench, most of the database's CPU per chat job.
 * One lookup per key (`unnest`, and a LATERAL subquery that OFFSET 0 keeps from being flattened
 * into a join) is the index whatever the table held when the plan was made, generic or custom.
 */
function requestRows(keys: readonly RequestKey[]): Prisma.Sql {
  if (keys.length === 1) {
    const [key] = keys;
    return Prisma.sql`ai_messages m
    WHERE m.request_id = ${key.requestId}::uuid AND (m.role = 'assistant' OR (m.role = 'user' AND m.user_id = ${key.userId}))`;
  }
  return Prisma.sql`unnest(${keys.map((key) => key.requestId)}::uuid[], ${keys.map((key) => key.userId)}::int[]) AS k(request_id, user_id),
    LATERAL (
      SELECT * FROM ai_messages m
      WHERE m.request_id = k.request_id AND (m.role = 'assistant' OR (m.role = 'user' AND m.user_id = k.user_id))
      OFFSET 0
    ) m`;
}

export type MessageFilter = Conversation & {
  requestIds?: string[] | null;
  roles?: Array<'user' | 'assistant' | 'system'> | null;
  limit: number;
};

/**
 * The conversation's messages, oldest first, filtered as GitLab's ChatStorage#messages_by does. Raw SQL, one
 * statement: web Duo Chat reads a thread's whole history each time it opens it, and Prisma's findMany with the
 * items (two statements, then its mapping of every row) cost a warm read of a 50-turn thread about a fifth of its CPU.
 */
export async function listMessages(prisma: PrismaClient, filter: MessageFilter): Promise<ChatMessageEvent[]> {
  if (!Number.isSafeInteger(filter.limit) || filter.limit < 0) throw new RangeError(`limit must be a whole number, got ${filter.limit}`);
  const requestIds = filter.requestIds?.filter((id) => isUuid(id));
  const records = await queryRows<MessageWithItems>(
    prisma,
    Prisma.sql`
    SELECT ${MESSAGE_COLUMNS}, ${CONTEXT_ITEMS}
    FROM ai_messages m
    WHERE m.user_id = ${filter.userId} AND ${threadIs(filter.threadId)}
      ${requestIds ? Prisma.sql`AND m.request_id = ANY(${requestIds}::uuid[])` : Prisma.empty}
      ${filter.roles ? Prisma.sql`AND m.role = ANY(${filter.roles}::ai_message_role[])` : Prisma.empty}
    ORDER BY m.thread_id, m.created_at, m.id
    LIMIT ${Prisma.raw(String(filter.limit))}`,
  );
  // thread_id leads the ORDER BY, as in conversationHistory: one value among these rows, so the order is the same,
  // and it is the index's order even for a legacy conversation (thread_id IS NULL), which PostgreSQL otherwise read
  // whole and sorted (5.5 against 0.06 ms at 20,000 messages). The limit is in the text, as there too.
  return records.map(toChatEvent);
}

/** `m.thread_id` is the conversation's thread, or null for the legacy conversation. */
const threadIs = (threadId: number | null) => (threadId === null ? Prisma.sql`m.thread_id IS NULL` : Prisma.sql`m.thread_id = ${threadId}`);

/** A turn of the conversation as a prompt uses it. */
export type HistoryTurn = Pick<ChatMessageEvent, 'role' | 'content'>;

/**
 * Messages of the conversation a prompt is given at most, newest kept: GitLab's chat sends the last
 * 50 successful messages (Gitlab::Llm::Chain::Utils::ChatConversation, LAST_N_CONVERSATIONS, the
 * same 50 its ChatStorage keeps). buildPrompt then drops the oldest of these that do not fit its
 * token budget.
 */
export const PROMPT_HISTORY_MESSAGES = 50;

/**
 * The turns a prompt may use: the conversation after its last /reset, without the given requests.
 * Only role and content are read (a prompt uses nothing else): no context items, no extras.
 */
export async function conversationHistory(
  prisma: PrismaClient,
  conversation: Conversation,
  excludeRequestIds: string[],
  limit = PROMPT_HISTORY_MESSAGES,
): Promise<HistoryTurn[]> {
  // Raw SQL: every chat job reads up to PROMPT_HISTORY_MESSAGES rows here, and Prisma's mapping of them cost about
  // twice the CPU of the query itself (1.45 vs 0.75 ms a call). The same filter as findMany's
  // { userId, threadId, requestId: { notIn }, errors: { isEmpty: true } }, the same order.
  // thread_id leads the ORDER BY (one value among these rows, so the order is unchanged): the
  // order is then the index's, (user_id, thread_id, created_at, id), read backwards, and
  // PostgreSQL stops after `limit` rows. Without it (`IS NULL` is not an equality the planner can
  // drop from the index's order) it read and sorted the whole conversation whenever its statistics
  // were stale (see the 20261123050000 migration).
  // The limit is written into the text, not sent as a parameter: with `LIMIT $n` PostgreSQL costs
  // the prepared statement's generic plan for an unknown limit (a tenth of the conversation: twice
  // the cost of a custom plan for `limit` rows in a long one), so it planned the statement afresh on
  // every call (pg_prepared_statements: custom plans only). With the number in the text the generic
  // plan is the same index scan at the same cost, and PostgreSQL keeps it (it may still prefer custom
  // plans when the table's statistics say most conversations are much shorter than the one read).
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`limit must be a whole number, got ${limit}`);
  const excluded = excludeRequestIds.filter((id) => isUuid(id));
  const newestFirst = await queryRows<HistoryTurn>(
    prisma,
    Prisma.sql`
    SELECT m.role::text AS role, m.content FROM ai_messages m
    WHERE m.user_id = ${conversation.userId} AND ${threadIs(conversation.threadId)}
      AND m.request_id <> ALL(${excluded}::uuid[]) AND m.errors = '{}'
    ORDER BY m.thread_id DESC, m.created_at DESC, m.id DESC
    LIMIT ${Prisma.raw(String(limit))}`,
  );
  const reset = newestFirst.findIndex((message) => message.role === 'user' && message.content.trim() === '/reset');
  return (reset === -1 ? newestFirst : newestFirst.slice(0, reset)).reverse();
}

/** `/clear`: forgets the conversation's messages. */
export async function clearConversation(prisma: PrismaClient, conversation: Conversation): Promise<number> {
  const { count } = await prisma.aiMessage.deleteMany({ where: { userId: conversation.userId, threadId: conversation.threadId } });
  return count;
}

type GateExtras = { gatekeeper?: { status?: string; intent?: string | null; confirmed?: boolean } };

/**
 * The request whose prompt the assistant last asked the user to confirm, if the conversation's
 * latest answer is that question and it was not confirmed yet. Marks it confirmed.
 */
export async function takePendingConfirmation(
  prisma: PrismaClient,
  conversation: Conversation,
  beforeRequestId: string,
): Promise<{ requestId: string; intent: string | null } | null> {
  const latest = await prisma.aiMessage.findFirst({
    where: { userId: conversation.userId, threadId: conversation.threadId, role: 'assistant', requestId: { not: beforeRequestId } },
    // thread_id first: the index's order, read backwards, for a legacy conversation too (listMessages).
    orderBy: [{ threadId: 'desc' }, { createdAt: 'desc' }, { id: 'desc' }],
  });
  const gate = (latest?.extras as GateExtras | undefined)?.gatekeeper;
  if (!latest || gate?.status !== 'NEEDS_CONFIRMATION' || gate.confirmed) return null;
  // Taken once: two confirmations sent together both read the question as pending, and only the one
  // whose update finds it still unconfirmed runs it (the other is a prompt of its own).
  const taken = await prisma.$executeRaw`
    UPDATE ai_messages SET extras = jsonb_set(extras, '{gatekeeper,confirmed}', 'true'::jsonb)
     WHERE id = ${latest.id}::uuid AND extras->'gatekeeper'->'confirmed' IS DISTINCT FROM 'true'::jsonb`;
  if (taken === 0) return null;
  return { requestId: latest.requestId, intent: gate.intent ?? null };
}
