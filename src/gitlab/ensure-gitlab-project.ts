import { isUniqueViolation } from '../db/errors';
import type { Group, PrismaClient, Project } from '../db/prisma';
import { AppError, notFound } from '../errors';
import type { GitLabClient } from './gitlab-client';
import type { GitLabProject } from './gitlab-types';

export type EnsureGitLabProjectOptions = {
  prisma: PrismaClient;
  gitlab: GitLabClient;
  /** GitLab's project id: the local project's id in connected mode. */
  gitlabProjectId: number;
};

/**
 * The local row of a GitLab project, made or brought up to date from GitLab's answer to the service
 * token (`GET /api/v4/projects/:id`): its path, visibility, default branch and repository
 * (`http_url_to_repo`), under groups mirroring its namespace. In connected mode a project's id is
 * GitLab's, so a push event's `project_id` names it. The webhook secret is left as it is (hook
 * registration sets it).
 *
 * Used by hook registration and system hooks. Identity and per-user project access from GitLab
 * (issue 43, item 2) mirror projects too; the two are meant to become one function.
 */
export async function ensureGitLabProject(options: EnsureGitLabProjectOptions): Promise<Project> {
  const { prisma, gitlab, gitlabProjectId } = options;
  const remote = await gitlab.project(gitlabProjectId, { kind: 'service' });
  if (!remote) throw notFound(`GitLab at ${gitlab.url} has no project ${gitlabProjectId} that GITLAB_SERVICE_TOKEN may read`);
  return mirrorGitLabProject(prisma, remote);
}

/** Upserts the project (by GitLab's id) and its namespace's groups from GitLab's answer. */
export async function mirrorGitLabProject(prisma: PrismaClient, remote: GitLabProject): Promise<Project> {
  try {
    return await upsertMirror(prisma, remote);
  } catch (error) {
    // Two events of one new namespace or project at once: both upserts inserted, one lost; the row is there now.
    if (!isUniqueViolation(error)) throw error;
    return upsertMirror(prisma, remote);
  }
}

async function upsertMirror(prisma: PrismaClient, remote: GitLabProject): Promise<Project> {
  const group = await ensureGroups(prisma, remote.namespace.full_path);
  const fields = {
    groupId: group.id,
    path: remote.path,
    fullPath: remote.path_with_namespace,
    name: remote.name,
    defaultBranch: remote.default_branch ?? 'main',
    visibility: remote.visibility,
    repositoryUrl: remote.http_url_to_repo,
  };
  const holder = await prisma.project.findUnique({ where: { fullPath: remote.path_with_namespace }, select: { id: true } });
  if (holder && holder.id !== remote.id)
    throw new AppError({
      code: 'CONFLICT',
      userMessage:
        `A project ${remote.path_with_namespace} with id ${holder.id} exists here, while GitLab's project of that path has id ` +
        `${remote.id}: remove or rename the local one (npm run admin) before connecting to GitLab`,
    });
  return prisma.project.upsert({ where: { id: remote.id }, create: { id: remote.id, ...fields }, update: fields });
}

/** The group of a namespace's full path, with its parents, made where missing (plan free: Duo access comes from DUO_ACCESS). */
async function ensureGroups(prisma: PrismaClient, fullPath: string): Promise<Group> {
  const segments = fullPath.split('/');
  let parentId: number | null = null;
  let group: Group | null = null;
  for (let index = 0; index < segments.length; index += 1) {
    const path = segments.slice(0, index + 1).join('/');
    group = await prisma.group.upsert({
      where: { fullPath: path },
      create: { path: segments[index], fullPath: path, name: segments[index], parentId },
      update: {},
    });
    parentId = group.id;
  }
  return group!;
}
