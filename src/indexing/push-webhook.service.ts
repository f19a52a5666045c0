import { timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { digestToken } from '../auth/tokens';
import type { PrismaClient } from '../db/prisma';
import type { Project } from '../db/prisma';
import { badInput, isAppError, unauthenticated } from '../errors';
import type { Queues } from '../queues';
import { requestIndexRun } from './code-index.service';
import { validateRef } from './git-reader';
import { parsePushEvent, type PushEvent } from './push-event';
import { webhookEventKey } from '../redis-keys';

export type HandlePushOptions = {
  prisma: PrismaClient;
  redis: Redis;
  redisPrefix: string;
  queues: Pick<Queues, 'enqueueIndex'>;
  event: PushEvent;
  /** X-Gitlab-Token. */
  token: string | null;
  /** X-Gitlab-Event-UUID: a repeat of an event already taken enqueues nothing. */
  eventUuid: string | null;
  debounceMs: number;
  /**
   * How the event's project is found: by its full path (standalone), or by GitLab's project id (`gitlab_project_id`)
   * in connected mode (a project renamed on GitLab keeps it). Default path.
   */
  projectBy?: 'path' | 'gitlab_id';
};

export type PushOutcome = { jobId: string | null; projectId: number; ref: string | null; duplicate: boolean; ignored?: string };

/** How long a webhook event id is remembered. GitLab retries a failed delivery within minutes. */
const EVENT_TTL_SECONDS = 24 * 60 * 60;

function sameDigest(expected: string | null, token: string | null): boolean {
  // Both sides are sha256 digests of the same length, so the comparison time says nothing about the secret.
  const actual = Buffer.from(digestToken(token ?? ''), 'hex');
  const wanted = Buffer.from(expected ?? digestToken(''), 'hex');
  return timingSafeEqual(actual, wanted) && expected !== null && token !== null && token !== '';
}

/** Takes a push event: checks the project's secret, remembers the event id, queues the ref's index job. */
export async function handlePush(options: HandlePushOptions): Promise<PushOutcome> {
  const { event } = options;
  const select = { id: true, webhookSecretDigest: true };
  const project =
    options.projectBy === 'gitlab_id'
      ? event.projectId === null
        ? null
        : await options.prisma.project.findUnique({ where: { gitlabProjectId: event.projectId }, select })
      : await options.prisma.project.findUnique({ where: { fullPath: event.projectPath }, select });
  // A missing project and a wrong secret are the same 401 (and take the same time): an anonymous
  // caller must not learn which private projects exist.
  const secretMatches = sameDigest(project?.webhookSecretDigest ?? null, options.token);
  if (!project || !secretMatches) throw unauthenticated();
  return enqueuePush(options, project.id);
}

/** Queues the index job of an authenticated push event's branch (once per event id). */
async function enqueuePush(options: Omit<HandlePushOptions, 'token'>, projectId: number): Promise<PushOutcome> {
  const { event } = options;
  const project = { id: projectId };
  if (event.branch === null)
    return { jobId: null, projectId: project.id, ref: null, duplicate: false, ignored: 'tag pushes are not indexed' };
  validateRef(event.branch);
  const eventKey = options.eventUuid ? webhookEventKey(options.redisPrefix, project.id, options.eventUuid) : null;
  if (eventKey) {
    const first = await options.redis.set(eventKey, '', 'EX', EVENT_TTL_SECONDS, 'NX');
    if (first === null) {
      const jobId = await options.redis.get(eventKey);
      return { jobId: jobId || null, projectId: project.id, ref: event.branch, duplicate: true };
    }
  }
  try {
    const { jobId } = await requestIndexRun(
      options,
      { projectId: project.id, ref: event.branch, deleted: event.deleted, reason: 'push', commitSha: event.deleted ? null : event.after },
      { debounceMs: options.debounceMs },
    );
    if (eventKey) await options.redis.set(eventKey, jobId, 'EX', EVENT_TTL_SECONDS);
    return { jobId, projectId: project.id, ref: event.branch, duplicate: false };
  } catch (error) {
    // Not taken: let GitLab's retry of the same event through.
    if (eventKey) await options.redis.del(eventKey).catch(() => undefined);
    throw error;
  }
}

export type HandleSystemHookOptions = Omit<HandlePushOptions, 'event' | 'token' | 'projectBy'> & {
  /** The request body: any of GitLab's system hook events. */
  body: unknown;
  /** X-Gitlab-Token. */
  token: string | null;
  /** GITLAB_SYSTEM_HOOK_TOKEN; unset refuses every system hook event. */
  systemHookToken: string | undefined;
  /** The local project of a GitLab project id, mirrored from GitLab the first time (ensureGitLabProject). */
  ensureProject(gitlabProjectId: number): Promise<Pick<Project, 'id'>>;
};

export type SystemHookOutcome = PushOutcome | { ignored: string; eventName: string };

/**
 * Takes a GitLab system hook event: checks the system hook's secret (GITLAB_SYSTEM_HOOK_TOKEN), and for
 * a branch push queues the project's index job as a project hook's push does, the project taken from
 * GitLab the first time it is seen. Other events (tag pushes, project_create, user_create...) are
 * acknowledged and ignored.
 */
export async function handleSystemHook(options: HandleSystemHookOptions): Promise<SystemHookOutcome> {
  // Digests of equal length compared in constant time, as a project's secret is.
  const expected = options.systemHookToken ? digestToken(options.systemHookToken) : null;
  if (!sameDigest(expected, options.token)) throw unauthenticated();
  const body = options.body as { event_name?: unknown } | null;
  const eventName = typeof body?.event_name === 'string' ? body.event_name : '';
  if (eventName !== 'push') return { ignored: `system hook events other than push are not used (${eventName || 'none'})`, eventName };
  const event = parsePushEvent(options.body);
  if (event.projectId === null) throw badInput('project_id: must be the GitLab project id', 'project_id');
  let project: Pick<Project, 'id'>;
  try {
    project = await options.ensureProject(event.projectId);
  } catch (error) {
    // A system hook reports every project of the instance; one the service token may not read is not ours to index. Said
    // with a 200, not a 404: GitLab would count the refusals against the hook.
    if (isAppError(error) && error.code === 'NOT_FOUND') return { ignored: error.userMessage, eventName };
    throw error;
  }
  return enqueuePush({ ...options, event }, project.id);
}
