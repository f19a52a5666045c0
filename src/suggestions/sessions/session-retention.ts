import { Prisma, type PrismaClient } from '../../db/prisma';
import { DEFAULT_SESSION_TIMING } from './session-runner';

/**
 * How much of continuous suggestions a user can keep: each session holds a whole document (up to
 * 400,000 characters) and each completed suggestion the document it was made for.
 */
export const SESSION_RETENTION = {
  /** Live sessions per user: starting one more ends the least recently updated. */
  liveSessionsPerUser: 20,
  /** Suggestions (with their feedback) kept per user, newest first. */
  suggestionsPerUser: 1_000,
  /** Suggestions older than this go, with their feedback: GitLab's 30 days for conversations. */
  suggestionMaxAgeMs: 30 * 24 * 60 * 60 * 1000,
} as const;

/**
 * After a session starts: the user's live sessions past `liveSessionsPerUser`, least recently
 * updated first, are ended (expired, their document dropped), as if idle; updates to them are refused.
 */
export async function endSessionsOverLimit(prisma: PrismaClient, options: { userId: number; idleMs: number }): Promise<number> {
  const liveSince = new Date(Date.now() - options.idleMs);
  return prisma.$executeRaw(Prisma.sql`
    UPDATE code_suggestion_sessions SET content = '', last_active_at = 'epoch'
    WHERE id IN (
      SELECT id FROM code_suggestion_sessions WHERE user_id = ${options.userId} AND last_active_at >= ${liveSince}::timestamptz
      ORDER BY last_active_at DESC, created_at DESC, id DESC OFFSET ${SESSION_RETENTION.liveSessionsPerUser})`);
}

export type SuggestionPurge = { suggestions: number; sessions: number };

/**
 * The maintenance purge: suggestions past their age or past the user's newest `suggestionsPerUser`
 * (their feedback with them), the documents of expired sessions, and expired sessions left with no
 * suggestion.
 */
export async function purgeSuggestionData(prisma: PrismaClient, options: { now?: Date; idleMs?: number } = {}): Promise<SuggestionPurge> {
  const now = options.now ?? new Date();
  const expiredBefore = new Date(now.getTime() - (options.idleMs ?? DEFAULT_SESSION_TIMING.idleMs));
  const oldBefore = new Date(now.getTime() - SESSION_RETENTION.suggestionMaxAgeMs);
  const aged = await prisma.$executeRaw(Prisma.sql`DELETE FROM code_suggestions WHERE created_at < ${oldBefore}::timestamptz`);
  const overLimit = await prisma.$executeRaw(Prisma.sql`
    DELETE FROM code_suggestions WHERE id IN (
      SELECT id FROM (
        SELECT s.id, row_number() OVER (PARTITION BY ss.user_id ORDER BY s.created_at DESC, s.id DESC) AS newest
        FROM code_suggestions s JOIN code_suggestion_sessions ss ON ss.id = s.session_id
      ) ranked
      WHERE newest > ${SESSION_RETENTION.suggestionsPerUser})`);
  await prisma.$executeRaw(Prisma.sql`
    UPDATE code_suggestion_sessions SET content = '' WHERE last_active_at < ${expiredBefore}::timestamptz AND content <> ''`);
  const sessions = await prisma.$executeRaw(Prisma.sql`
    DELETE FROM code_suggestion_sessions ss WHERE ss.last_active_at < ${expiredBefore}::timestamptz
      AND NOT EXISTS (SELECT 1 FROM code_suggestions s WHERE s.session_id = ss.id)`);
  return { suggestions: aged + overLimit, sessions };
}
