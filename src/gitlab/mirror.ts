import { isUniqueViolation } from '../db/errors';
import type { PrismaClient, Project, User } from '../db/prisma';
import { AppError, notFound } from '../errors';
import type { GitLabClient } from './gitlab-client';
import type { GitLabProject, GitLabUser } from './gitlab-types';

// Rows mirrored from GitLab take GitLab's id as their own (so that the ids the service answers with are the ones GitLab's
// clients know) and keep it in gitlab_*_id, which marks them as mirrored. A local row in the way is a clear error: a
// connected instance needs a database without local users and projects of the same ids or paths.

function clash(what: string, cause: unknown): AppError {
  return new AppError({
    code: 'INTERNAL',
    userMessage: `Cannot mirror ${what} from GitLab: a local row has its id, username or path (connected mode needs a database of its own)`,
    cause,
  });
}

/** Local rows take ids from the table's sequence: after a row with GitLab's id, it must start above it. */
async function advanceSequence(prisma: PrismaClient, table: 'users' | 'groups' | 'projects'): Promise<void> {
  await prisma.$queryRawUnsafe(`SELECT setval(pg_get_serial_sequence('"${table}"', 'id'), (SELECT MAX(id) FROM "${table}"))`);
}

/**
 * A mirrored row made or brought up to date: found by its GitLab id, updated only when `data` differs,
 * else created. A create that loses a race with another request's returns that one's row; any other
 * row in the way (a local one with the same id, username or path) is a clash.
 */
async function mirrorRow<Row extends { id: number }, Data extends Record<string, unknown>>(row: {
  what: string;
  data: Data;
  find: () => Promise<Row | null>;
  update: (id: number) => Promise<Row>;
  create: () => Promise<Row>;
}): Promise<Row> {
  const existing = await row.find();
  if (existing) {
    const changed = Object.keys(row.data).some((key) => (existing as Record<string, unknown>)[key] !== row.data[key]);
    if (!changed) return existing;
    try {
      return await row.update(existing.id);
    } catch (error) {
      if (isUniqueViolation(error)) throw clash(row.what, error);
      throw error;
    }
  }
  try {
    return await row.create();
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // Another request mirrored the same row at the same moment; anything else is a local row in the way.
    const raced = await row.find();
    if (raced) return raced;
    throw clash(row.what, error);
  }
}

/**
 * The local row of a GitLab user, made or brought up to date (username, name, email, admin) from
 * GitLab's answer. GitLab sends `email` to the user themself with read_user or api; without it the
 * user gets GitLab's private address form.
 */
export async function mirrorGitLabUser(prisma: PrismaClient, gitlabUrl: string, user: GitLabUser): Promise<User> {
  const data = {
    username: user.username,
    name: user.name,
    email: user.email || `${user.id}-${user.username}@users.noreply.${new URL(gitlabUrl).hostname}`,
    admin: user.is_admin ?? false,
    state: 'active' as const,
  };
  return mirrorRow({
    what: `user ${user.username}`,
    data,
    find: () => prisma.user.findUnique({ where: { gitlabUserId: user.id } }),
    update: (id) => prisma.user.update({ where: { id }, data }),
    create: async () => {
      const created = await prisma.user.create({ data: { id: user.id, gitlabUserId: user.id, ...data } });
      await advanceSequence(prisma, 'users');
      return created;
    },
  });
}

/**
 * The local row of a GitLab project (and of its namespace, as a group), made or brought up to date
 * from GitLab's answer: path, name, visibility, default branch, repository and web URLs.
 */
export async function mirrorGitLabProject(prisma: PrismaClient, project: GitLabProject): Promise<Project> {
  const namespace = project.namespace;
  const groupData = { path: namespace.path, fullPath: namespace.full_path, name: namespace.name };
  try {
    const group = await prisma.group.findUnique({ where: { gitlabNamespaceId: namespace.id } });
    if (!group) {
      await prisma.group.create({ data: { id: namespace.id, gitlabNamespaceId: namespace.id, parentId: null, ...groupData } });
      await advanceSequence(prisma, 'groups');
    } else if (group.path !== groupData.path || group.fullPath !== groupData.fullPath || group.name !== groupData.name) {
      await prisma.group.update({ where: { id: group.id }, data: groupData });
    }
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    if (!(await prisma.group.findUnique({ where: { gitlabNamespaceId: namespace.id } })))
      throw clash(`namespace ${namespace.full_path}`, error);
  }
  const data = {
    groupId: namespace.id,
    path: project.path,
    fullPath: project.path_with_namespace,
    name: project.name,
    // An empty repository has no default branch yet; nothing can be indexed until it has one.
    defaultBranch: project.default_branch ?? 'main',
    visibility: project.visibility,
    duoFeaturesEnabled: project.duo_features_enabled ?? true,
    repositoryUrl: project.http_url_to_repo,
    webUrl: project.web_url,
  };
  return mirrorRow({
    what: `project ${project.path_with_namespace}`,
    data,
    find: () => prisma.project.findUnique({ where: { gitlabProjectId: project.id } }),
    update: (id) => prisma.project.update({ where: { id }, data }),
    create: async () => {
      const created = await prisma.project.create({ data: { id: project.id, gitlabProjectId: project.id, ...data } });
      await advanceSequence(prisma, 'projects');
      return created;
    },
  });
}

export type EnsureGitLabProjectOptions = {
  prisma: PrismaClient;
  gitlab: GitLabClient;
  /** GitLab's project id (a push event's `project_id`). */
  gitlabProjectId: number;
};

/**
 * The local row of a GitLab project asked about with the service token (`GET /api/v4/projects/:id`), for
 * what no user asks: hook registration and system hooks. Mirrored as a user's request mirrors it
 * (mirrorGitLabProject); the webhook secret is left as it is (hook registration sets it).
 */
export async function ensureGitLabProject(options: EnsureGitLabProjectOptions): Promise<Project> {
  const { prisma, gitlab, gitlabProjectId } = options;
  const remote = await gitlab.project(gitlabProjectId, { kind: 'service' });
  if (!remote) throw notFound(`GitLab at ${gitlab.url} has no project ${gitlabProjectId} that GITLAB_SERVICE_TOKEN may read`);
  return mirrorGitLabProject(prisma, remote);
}

/**
 * Keeps the access level GitLab last gave a user on a project as their membership row, for what
 * runs without the user's token (a chat job a moment after the request): 0 removes it.
 */
export async function recordAccessLevel(
  prisma: PrismaClient,
  options: { userId: number; projectId: number; level: number },
): Promise<void> {
  const key = { projectId_userId: { projectId: options.projectId, userId: options.userId } };
  const existing = await prisma.projectMember.findUnique({ where: key });
  if ((existing?.accessLevel ?? 0) === options.level) return;
  if (options.level <= 0) await prisma.projectMember.deleteMany({ where: { projectId: options.projectId, userId: options.userId } });
  else
    await prisma.projectMember.upsert({
      where: key,
      create: { projectId: options.projectId, userId: options.userId, accessLevel: options.level },
      update: { accessLevel: options.level },
    });
}
