import { z } from 'zod';
import { badInput } from '../errors';

const SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;
const ZERO_SHA = /^0+$/;

const pathList = z.array(z.string().max(4096)).max(10_000);

const pushEventSchema = z.object({
  object_kind: z.literal('push', { message: 'must be "push"' }),
  ref: z.string().min(1).max(1024),
  before: z.string().regex(SHA, 'must be a full commit sha'),
  after: z.string().regex(SHA, 'must be a full commit sha'),
  checkout_sha: z.string().regex(SHA, 'must be a full commit sha').nullable().optional(),
  total_commits_count: z.number().int().min(0).optional(),
  /** GitLab's project id, at the top level too (system hooks' push events name the project by it). */
  project_id: z.number().int().positive().optional(),
  project: z.object({
    id: z.number().int().optional(),
    path_with_namespace: z.string().min(1).max(1024),
    default_branch: z.string().max(1024).nullable().optional(),
    git_http_url: z.string().max(4096).nullable().optional(),
  }),
  commits: z
    .array(z.object({ added: pathList.optional(), modified: pathList.optional(), removed: pathList.optional() }))
    .max(10_000)
    .optional(),
});

/** What duo-slice needs from GitLab's push event. */
export type PushEvent = {
  projectPath: string;
  /** GitLab's project id (`project_id`, or `project.id`); null when the event names none. */
  projectId: number | null;
  /** The branch name (`refs/heads/` removed), or null for a tag push. */
  branch: string | null;
  after: string;
  /** `after` is all zeros: the branch was deleted. */
  deleted: boolean;
  /** Paths the commits touched, as GitLab lists them (informational: the worker diffs commits itself). */
  changedPaths: number;
};

/** Validates a push event body; a bad one is a BAD_USER_INPUT naming the field (dotted path). */
export function parsePushEvent(body: unknown): PushEvent {
  const parsed = pushEventSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join('.') || 'body';
    throw badInput(`${field}: ${issue.message}`, field);
  }
  const event = parsed.data;
  const branch = event.ref.startsWith('refs/heads/') ? event.ref.slice('refs/heads/'.length) : null;
  if (branch === null && !event.ref.startsWith('refs/tags/')) throw badInput('ref: must start with refs/heads/ or refs/tags/', 'ref');
  let changedPaths = 0;
  for (const commit of event.commits ?? [])
    changedPaths += (commit.added?.length ?? 0) + (commit.modified?.length ?? 0) + (commit.removed?.length ?? 0);
  const projectId = event.project_id ?? event.project.id ?? null;
  return {
    projectPath: event.project.path_with_namespace,
    projectId,
    branch,
    after: event.after,
    deleted: ZERO_SHA.test(event.after),
    changedPaths,
  };
}
