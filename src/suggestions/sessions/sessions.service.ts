import { randomUUID } from 'node:crypto';
import { findReadableProject } from '../../auth/policies';
import { RATE_LIMIT_MESSAGE, userRateLimitKey, type RequestLimiter } from '../../auth/rate-limits';
import type { Viewer } from '../../auth/viewer';
import { queryRows } from '../../db/bulk-sql';
import { turnBatch } from '../../turn-batch';
import { Prisma, type PrismaClient } from '../../db/prisma';
import { AppError, badInput } from '../../errors';
import type { LlmProvider } from '../../llm/types';
import type { Logger } from '../../logger';
import { COMPLETION_LIMITS } from '../completion-request';
import { runGeneration, type CompletedSuggestion, type DetectIntentFor } from './run-generation';
import { DEFAULT_SESSION_TIMING, SessionRunner, type SessionRunnerOptions, type SessionTimingOptions } from './session-runner';
import { listenerIterator, type EventBus } from '../../events/event-bus';
import { suggestionSessionChannel } from '../../redis-keys';
import type { CodeSuggestionUpdateEvent } from './session-update';
import { SESSION_NOT_AVAILABLE } from './suggestion-feedback';
import { endSessionsOverLimit } from './session-retention';
import { isUuid } from '../../validation';

export type SuggestionSessionsOptions = SessionTimingOptions & {
  prisma: PrismaClient;
  /** The code suggestions budget the completions endpoint spends too: each generation takes one. */
  budget: RequestLimiter;
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
  /** Users whose budget a generation found spent, until when: their updates are refused meanwhile. */
  private readonly spent = new Map<number, number>();

  constructor(private readonly options: SuggestionSessionsOptions) {
    this.idleMs = options.idleMs ?? DEFAULT_SESSION_TIMING.idleMs;
    this.store = suggestionStore(options.prisma);
    this.runner = new SessionRunner({
      debounceMs: options.debounceMs,
      idleMs: this.idleMs,
      publish: (update) => this.publish(update),
      generate: (job) => this.generate(job),
      onError: (error, sessionId) =>
        options.logger.warn({ event: 'code_suggestion_session_failed', sessionId, err: error }, 'code suggestion session failed'),
    });
  }

  /**
   * Opens a session with the whole document; generations follow updates (the client subscribes with the id first). A user
   * has at most SESSION_RETENTION.liveSessionsPerUser live sessions: the least recently updated past that one ends.
   */
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
    await endSessionsOverLimit(this.options.prisma, { userId: viewer.user.id, idleMs: this.idleMs });
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
    this.refuseWhenSpent(viewer);
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

  /**
   * A generation is what the budget counts (a burst of updates makes one): it takes one from the user's code suggestions
   * budget before anything else, and with none left it is EMPTY (`rate_limited`) without calling the model.
   */
  private async generate(job: Parameters<SessionRunnerOptions['generate']>[0]): Promise<void> {
    const decision = await this.options.budget.consume(userRateLimitKey(job.state.userId));
    if (!decision.allowed) {
      this.noteSpent(job.state.userId, Date.now() + decision.retryAfterSeconds * 1000);
      if (job.signal.aborted) return;
      const { sessionId, suggestionId, state } = job;
      const update = { sessionId, suggestionId, revision: state.revision, intent: null, generationType: null, text: '' };
      return this.publish({ ...update, status: 'EMPTY', reason: 'rate_limited' });
    }
    await runGeneration({
      ...job,
      llm: this.options.llm,
      maxRetries: this.options.maxRetries,
      detect: this.options.detect,
      publish: (update) => this.publish(update),
      store: (suggestion) => this.store(suggestion),
      logger: this.options.logger,
    });
  }

  /** Refused as the completions endpoint refuses (GitLab's words) while a generation found the user's budget spent. */
  private refuseWhenSpent(viewer: Viewer): void {
    const until = this.spent.get(viewer.user.id);
    if (until === undefined) return;
    if (until <= Date.now()) return void this.spent.delete(viewer.user.id);
    throw new AppError({
      code: 'RATE_LIMITED',
      userMessage: RATE_LIMIT_MESSAGE,
      internalMessage: `user ${viewer.user.id} has used up their code suggestions for now`,
    });
  }

  private noteSpent(userId: number, until: number): void {
    // Entries are dropped as they are read past their time; users who never come back are swept here.
    if (this.spent.size >= 1000) for (const [user, time] of this.spent) if (time <= Date.now()) this.spent.delete(user);
    this.spent.set(userId, until);
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
