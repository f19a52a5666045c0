import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { digestToken } from '../auth/tokens';
import type { PrismaClient } from '../db/prisma';
import { AppError, badInput, isAppError, notFound } from '../errors';
import type { Logger } from '../logger';
import { mirrorGitLabProject } from './mirror';
import { projectPathSegment, type GitLabClient, type GitLabResponse } from './gitlab-client';
import { gitLabProjectSchema, type GitLabProject } from './gitlab-types';

/** One hook of GET /api/v4/projects/:id/hooks, the fields read (GitLab never answers a hook's token). */
const gitLabHookSchema = z.object({ id: z.number().int(), url: z.string(), push_events: z.boolean() });
type GitLabHook = z.infer<typeof gitLabHookSchema>;

export type RegisterPushWebhooksOptions = {
  prisma: PrismaClient;
  gitlab: GitLabClient;
  logger: Logger;
  /** A project (id or full path), or a group (id or full path) whose projects, subgroups' included, all get the hook. */
  target: { project: string } | { group: string };
  /** Where GitLab sends push events: this service's `/api/v4/webhooks/push`. */
  hookUrl: string;
  /** GitLab checks the hook URL's TLS certificate. Default true. */
  enableSslVerification?: boolean;
  /** Projects asked per page of a group's list. Default 100 (GitLab's most). */
  perPage?: number;
};

export type RegisteredHook = { project_id: number; full_path: string; hook_id: number; action: 'created' | 'updated' };
export type FailedHook = { project_id: number | null; full_path: string | null; error: string };
export type RegisterPushWebhooksResult = { hook_url: string; registered: RegisteredHook[]; failed: FailedHook[] };

/**
 * Registers this service's push webhook on a GitLab project, or on every project of a group, through
 * GitLab's API with the service token (which needs the api scope and Maintainer on each project).
 *
 * Each project is mirrored here first (mirrorGitLabProject, as a user's request mirrors it), then given a new webhook secret:
 * GitLab's hook with our URL is updated with it (never a second hook: `GET /projects/:id/hooks` finds
 * it), or one is created; the secret's digest is stored once GitLab holds the secret. GitLab never
 * answers a hook's token and we keep only a digest, so a run always sets a new one. A project that
 * fails is listed with its reason and the others go on.
 */
export async function registerPushWebhooks(options: RegisterPushWebhooksOptions): Promise<RegisterPushWebhooksResult> {
  const hookUrl = checkHookUrl(options.hookUrl);
  const projects =
    'project' in options.target ? [await projectOf(options, options.target.project)] : await groupProjects(options, options.target.group);
  const registered: RegisteredHook[] = [];
  const failed: FailedHook[] = [];
  for (const remote of projects) {
    try {
      registered.push(await registerOn(options, remote, hookUrl));
    } catch (error) {
      if (!isAppError(error) || error.code === 'UNAVAILABLE') throw error;
      options.logger.warn(
        { event: 'gitlab_hook_registration_failed', projectId: remote.id, reason: error.userMessage },
        'push webhook not registered',
      );
      failed.push({ project_id: remote.id, full_path: remote.path_with_namespace, error: error.userMessage });
    }
  }
  return { hook_url: hookUrl, registered, failed };
}

function checkHookUrl(value: string): string {
  const url = URL.canParse(value) ? new URL(value) : null;
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.username || url.password)
    throw badInput(`the hook URL "${value}" must be an http(s) URL without credentials`, 'url');
  return url.toString();
}

async function projectOf(options: RegisterPushWebhooksOptions, reference: string): Promise<GitLabProject> {
  const project = await options.gitlab.project(reference, { kind: 'service' });
  if (!project) throw notFound(`GitLab at ${options.gitlab.url} has no project ${reference} that GITLAB_SERVICE_TOKEN may read`);
  return project;
}

/** GET /api/v4/groups/:id/projects with include_subgroups, page by page (X-Next-Page), projects shared into the group left out. */
async function groupProjects(options: RegisterPushWebhooksOptions, group: string): Promise<GitLabProject[]> {
  const projects: GitLabProject[] = [];
  const what = 'GET /api/v4/groups/:id/projects';
  for (let page: string | null = '1'; page;) {
    const response: GitLabResponse = await options.gitlab.request({
      path: `/api/v4/groups/${encodeURIComponent(group)}/projects`,
      credential: { kind: 'service' },
      query: { include_subgroups: true, with_shared: false, per_page: options.perPage ?? 100, page, order_by: 'id', sort: 'asc' },
    });
    if (response.status === 404) throw notFound(`GitLab at ${options.gitlab.url} has no group ${group} that GITLAB_SERVICE_TOKEN may read`);
    projects.push(...parse(options.gitlab, response, z.array(gitLabProjectSchema), what));
    page = response.headers.get('x-next-page') || null;
  }
  return projects;
}

async function registerOn(options: RegisterPushWebhooksOptions, remote: GitLabProject, hookUrl: string): Promise<RegisteredHook> {
  const { gitlab, prisma } = options;
  const project = await mirrorGitLabProject(prisma, remote);
  const hooksPath = `/api/v4/projects/${projectPathSegment(remote.id)}/hooks`;
  const listed = await gitlab.request({ path: hooksPath, credential: { kind: 'service' }, query: { per_page: 100 } });
  const hooks = parse(gitlab, listed, z.array(gitLabHookSchema), 'GET /api/v4/projects/:id/hooks');
  const existing: GitLabHook | undefined = hooks.find((hook) => hook.url === hookUrl);
  const secret = randomBytes(24).toString('base64url');
  const body = { url: hookUrl, token: secret, push_events: true, enable_ssl_verification: options.enableSslVerification ?? true };
  const saved = existing
    ? await gitlab.request({ method: 'PUT', path: `${hooksPath}/${existing.id}`, credential: { kind: 'service' }, body })
    : await gitlab.request({ method: 'POST', path: hooksPath, credential: { kind: 'service' }, body });
  const hook = parse(
    gitlab,
    saved,
    gitLabHookSchema,
    existing ? 'PUT /api/v4/projects/:id/hooks/:hook_id' : 'POST /api/v4/projects/:id/hooks',
  );
  // GitLab holds the new secret from now on: deliveries carry it, so the digest follows at once.
  await prisma.project.update({ where: { id: project.id }, data: { webhookSecretDigest: digestToken(secret) } });
  return { project_id: project.id, full_path: project.fullPath, hook_id: hook.id, action: existing ? 'updated' : 'created' };
}

/** A 2xx answer of the expected shape; GitLab's refusals in words an operator can act on. */
function parse<T>(gitlab: GitLabClient, response: GitLabResponse, schema: z.ZodType<T>, what: string): T {
  if (response.status === 401)
    throw new AppError({ code: 'UNAUTHENTICATED', userMessage: `GitLab at ${gitlab.url} refused GITLAB_SERVICE_TOKEN (${what})` });
  if (response.status === 403)
    throw new AppError({
      code: 'FORBIDDEN',
      userMessage:
        `GitLab at ${gitlab.url} forbade ${what} to GITLAB_SERVICE_TOKEN: managing a project's hooks needs the api scope and the ` +
        'Maintainer role (or more) on the project',
    });
  if (response.status === 404)
    throw notFound(`GitLab at ${gitlab.url} answered ${what} with 404: the project is gone or hidden from the token`);
  const parsed = response.status >= 200 && response.status < 300 ? schema.safeParse(response.body) : null;
  if (!parsed?.success)
    throw new AppError({
      code: 'INTERNAL',
      userMessage: `GitLab at ${gitlab.url} answered ${what} unexpectedly`,
      internalMessage: `${what}: HTTP ${response.status}${parsed ? `, ${parsed.error.message}` : ''}`,
    });
  return parsed.data;
}
