import { timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { digestToken } from '../auth/tokens';
import type { PrismaClient } from '../db/prisma';
import { unauthenticated } from '../errors';
import type { Queues } from '../queues';
import { requestIndexRun } from './code-index.service';
import { validateRef } from './git-reader';
import type { PushEvent } from './push-event';
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
  const project = await options.prisma.project.findUnique({
    where: { fullPath: event.projectPath },
    select: { id: true, webhookSecretDigest: true },
  });
  // A missing project and a wrong secret are the same 401 (and take the same time): an anonymous
  // caller must not learn which private projects exist.
  const secretMatches = sameDigest(project?.webhookSecretDigest ?? null, options.token);
  if (!project || !secretMatches) throw unauthenticated();
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
