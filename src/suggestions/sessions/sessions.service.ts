import { randomUUID } from 'node:crypto';
import { findReadableProject } from '../../auth/policies';
import type { Viewer } from '../../auth/viewer';
import { queryRows } from '../../db/bulk-sql';
import { turnBatch } from '../../turn-batch';
import { Prisma, type PrismaClient } from '../../db/prisma';
import { AppError, badInput } from '../../errors';
import type { LlmProvider } from '../../llm/types';
import type { Logger } from '../../logger';
import { COMPLETION_LIMITS } from '../completion-request';
import { runGeneration, type CompletedSuggestion, type DetectIntentFor } from './run-generation';
import { DEFAULT_SESSION_TIMING, SessionRunner, type SessionTimingOptions } from './session-runner';
import { listenerIterator, type EventBus } from '../../events/event-bus';
import { suggestionSessionChannel } from '../../redis-keys';
import type { CodeSuggestionUpdateEvent } from './session-update';
import { SESSION_NOT_AVAILABLE } from './suggestion-feedback';
import { isUuid } from '../../validation';

export type SuggestionSessionsOptions = SessionTimingOptions & {
  prisma: PrismaClient;
  /** Carries the updates over Redis pub/sub to every replica's subscribers. */
  events: EventBus;
  /** Redis key prefix of this instance. */
  prefix: string;
  /** Null when no model is configured: every generation is EMPTY. */
  llm: LlmProvider | null;
  maxRetries: number;
  detect: DetectIntentFor;
  logger: Logger;
};

export type SessionDocument = { content: string; cursorOffset: number };

/**
 * Continuous code suggestions. Sessions (the latest document) live in the database; their live
 * state (debounce, generation in flight) in the API process that receives their updates, which
 * also runs the generations. Updates go through Redis pub/sub, so a subscriber on any replica
 * gets them; a client keeps its updates on one connection (as IDEs do) for the supersede rule to hold.
 */
export class SuggestionSessions {
  private readonly runner: SessionRunner;
  private readonly idleMs: number;
  private readonly store: (suggestion: CompletedSuggestion) => Promise<void>;

  constructor(private readonly options: SuggestionSessionsOptions) {
    this.idleMs = options.idleMs ?? DEFAULT_SESSION_TIMING.idleMs;
    this.store = suggestionStore(options.prisma);
    this.runner = new SessionRunner({
      debounceMs: options.debounceMs,
      idleMs: this.idleMs,
      publish: (update) => this.publish(update),
      generate: (job) =>
        runGeneration({
          ...job,
          llm: options.llm,
          maxRetries: options.maxRetries,
          detect: options.detect,
          publish: (update) => this.publish(update),
          store: (suggestion) => this.store(suggestion),
          logger: options.logger,
        }),
      onError: (error, sessionId) =>
        options.logger.warn({ event: 'code_suggestion_session_failed', sessionId, err: error }, 'code suggestion session failed'),
    });
  }

  /** Opens a session with the whole document; generations follow updates (the client subscribes with the id first). */
  async start(viewer: Viewer, input: SessionDocument & { fileName: string; projectPath: string | null }): Promise<{ sessionId: string }> {
    if (!input.fileName.trim()) throw badInput('fileName is empty', 'fileName');
    if (input.fileName.length > COMPLETION_LIMITS.fileName)
      throw badInput(`fileName is too long (maximum is ${COMPLETION_LIMITS.fileName} characters)`, 'fileName');
    checkDocument(input);
    if (input.projectPath && !(await findReadableProject(this.options.prisma, viewer, { fullPath: input.projectPath }))) {
      throw new AppError({ code: 'NOT_FOUND', userMessage: SESSION_NOT_AVAILABLE, field: 'projectPath' });
    }
    const session = await this.options.prisma.codeSuggestionSession.create({
      data: {
        id: randomUUID(),
        userId: viewer.user.id,
        fileName: input.fileName,
        projectPath: input.projectPath || null,
        content: input.content,
        cursorOffset: input.cursorOffset,
      },
    });
    return { sessionId: session.id };
  }

  /**
   * Takes the whole latest document, supersedes the generation in flight and schedules the next
   * one, the debounce counted from `arrivedAt` (performance.now() when the update arrived; default now).
   */
  async update(
    viewer: Viewer,
    input: SessionDocument & { sessionId: string; arrivedAt?: number },
  ): Promise<{ sessionId: string; revision: number }> {
    const arrivedAt = input.arrivedAt ?? performance.now();
    // Until this update is taken or refused, the session's debounce does not end (see SessionRunner).
    const taken = this.runner.arriving(input.sessionId.toLowerCase());
    try {
      return await this.take(viewer, input, arrivedAt);
    } finally {
      taken();
    }
  }

  private async take(viewer: Viewer, input: SessionDocument & { sessionId: string }, arrivedAt: number) {
    checkDocument(input);
    // One round trip per keystroke burst: the ownership and expiry checks are part of the update.
    // Raw SQL straight on the pool, prepared (queryRows): it runs on every keystroke burst, and
    // Prisma's update cost more CPU than the query.
    // Not the document back: the caller has it, and reading it back would double what each burst moves.
    // Committed asynchronously (synchronous_commit off for this statement's transaction only): the
    // document is sent whole on every update, so not waiting for the WAL flush (1-3 ms each, and
    // the 50 updates of a burst of sessions queue for it) costs at most the last fraction of a
    // second of updates if PostgreSQL itself crashes, which the client's next update replaces (a
    // revision number may then be given again, to the newer content).
    const now = Date.now();
    const [updated] = isUuid(input.sessionId)
      ? await queryRows<{ id: string; fileName: string; projectPath: string | null; revision: number }>(
          this.options.prisma,
          Prisma.sql`
          UPDATE code_suggestion_sessions
          SET content = ${input.content}, cursor_offset = ${input.cursorOffset}, revision = revision + 1,
            last_active_at = ${new Date(now)}::timestamptz
          WHERE id = ${input.sessionId}::uuid AND user_id = ${viewer.user.id}
            AND last_active_at >= ${new Date(now - this.idleMs)}::timestamptz
            AND set_config('synchronous_commit', 'off', true) IS NOT NULL
          RETURNING id::text AS id, file_name AS "fileName", project_path AS "projectPath", revision`,
        )
      : [];
    if (!updated) throw new AppError({ code: 'NOT_FOUND', userMessage: SESSION_NOT_AVAILABLE, field: 'sessionId' });
    const session = updated;
    this.runner.update(
      session.id,
      {
        userId: viewer.user.id,
        fileName: updated.fileName,
        projectPath: updated.projectPath,
        content: input.content,
        cursorOffset: input.cursorOffset,
        revision: updated.revision,
      },
      arrivedAt,
    );
    return { sessionId: session.id, revision: updated.revision };
  }

  /** The session's updates from now on; refused like a missing session when it is someone else's or expired. */
  async updates(viewer: Viewer, sessionId: string): Promise<AsyncIterableIterator<CodeSuggestionUpdateEvent>> {
    const session = await this.ownSession(viewer, sessionId);
    return listenerIterator<CodeSuggestionUpdateEvent>((push) =>
      this.options.events.listen(suggestionSessionChannel(this.options.prefix, session.id), push),
    );
  }

  close(): void {
    this.runner.close();
  }

  private async ownSession(viewer: Viewer, sessionId: string) {
    const session = isUuid(sessionId)
      ? await this.options.prisma.codeSuggestionSession.findFirst({
          where: { id: sessionId, userId: viewer.user.id, lastActiveAt: { gte: new Date(Date.now() - this.idleMs) } },
          select: { id: true },
        })
      : null;
    if (!session) throw new AppError({ code: 'NOT_FOUND', userMessage: SESSION_NOT_AVAILABLE, field: 'sessionId' });
    return session;
  }

  private publish(update: CodeSuggestionUpdateEvent): Promise<void> {
    return this.options.events.publish(suggestionSessionChannel(this.options.prefix, update.sessionId), update);
  }
}

type StoredSuggestion = CompletedSuggestion & { createdAt: Date };

/**
 * Keeps completed suggestions (for feedback and statistics), before their COMPLETE is sent. The
 * suggestions completed in one event-loop turn go in one statement (turnBatch): the generations of
 * keystroke bursts that arrived together complete together, and one multi-row INSERT is one round
 * trip and one commit instead of one each. Raw SQL on the pool, prepared (queryRows), one text
 * whatever the number of rows (arrays, unnest). created_at is taken when the suggestion is handed
 * in, as Prisma's @default(now()) would.
 */
function suggestionStore(prisma: PrismaClient): (suggestion: CompletedSuggestion) => Promise<void> {
  const write = async (rows: StoredSuggestion[]) => {
    await queryRows(
      prisma,
      Prisma.sql`
      INSERT INTO code_suggestions (id, session_id, revision, content, cursor_offset, language, intent, generation_type, text, created_at)
      SELECT * FROM unnest(${rows.map((row) => row.id)}::uuid[], ${rows.map((row) => row.sessionId)}::uuid[],
        ${rows.map((row) => row.state.revision)}::int[], ${rows.map((row) => row.state.content)}::text[],
        ${rows.map((row) => row.state.cursorOffset)}::int[], ${rows.map((row) => row.language)}::text[],
        ${rows.map((row) => row.intent)}::text[], ${rows.map((row) => row.generationType)}::text[], ${rows.map((row) => row.text)}::text[],
        ${rows.map((row) => row.createdAt)}::timestamptz[])`,
    );
  };
  const insert = turnBatch<StoredSuggestion, void>({
    runMany: async (rows) => (await write(rows), rows.map(() => undefined)),
    runOne: (row) => write([row]),
  });
  return (suggestion) => insert({ ...suggestion, createdAt: new Date() });
}

function checkDocument(input: SessionDocument): void {
  if (input.content.length > COMPLETION_LIMITS.content)
    throw badInput(`content is too long (maximum is ${COMPLETION_LIMITS.content} characters)`, 'content');
  if (!Number.isInteger(input.cursorOffset) || input.cursorOffset < 0 || input.cursorOffset > input.content.length) {
    throw badInput('cursorOffset must be between 0 and the length of content', 'cursorOffset');
  }
}
