import type { Prisma, PrismaClient, Project } from '../db/prisma';
import { AppError, forbidden, NOT_AVAILABLE } from '../errors';
import { numericId, rowId, toGlobalId, type GlobalId } from '../global-id';
import { resolveDuoAccess, type DuoAccess } from './duo-access';
import { hasScope, type Viewer } from './viewer';
import { authCaches } from './auth-cache';
import type { MembershipSource, ProjectWhere } from './membership-source';
import { gitLabConnection } from '../gitlab/gitlab-connection';
import { gitLabMembership } from '../gitlab/gitlab-membership';

export const ACCESS_LEVELS = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
export type AccessLevelName = keyof typeof ACCESS_LEVELS;

/** Ids of a group and all its ancestors, nearest first. */
export async function groupAncestry(prisma: PrismaClient, groupId: number): Promise<number[]> {
  const cache = authCaches(prisma)?.ancestry;
  return cache ? cache.get(String(groupId), () => readAncestry(prisma, groupId)) : readAncestry(prisma, groupId);
}

async function readAncestry(prisma: PrismaClient, groupId: number): Promise<number[]> {
  const ids: number[] = [];
  let current: number | null = groupId;
  while (current !== null && !ids.includes(current)) {
    ids.push(current);
    const group: { parentId: number | null } | null = await prisma.group.findUnique({ where: { id: current }, select: { parentId: true } });
    current = group?.parentId ?? null;
  }
  return ids;
}

/**
 * Where projects and memberships come from: the database, or the GitLab the service is connected to
 * (GITLAB_URL). The one switch between the two; every rule below is the same for both.
 */
export function membershipSource(prisma: PrismaClient): MembershipSource {
  const gitlab = gitLabConnection(prisma);
  return gitlab ? gitLabMembership(prisma, gitlab) : localMembership(prisma);
}

function localMembership(prisma: PrismaClient): MembershipSource {
  return {
    findProject: (where) => prisma.project.findUnique({ where }),
    accessLevel: (viewer, project) => {
      const cache = authCaches(prisma)?.accessLevels;
      const read = () => readAccessLevel(prisma, viewer, project);
      return cache ? cache.get(`${viewer.user.id}|${project.id}|${project.groupId}`, read) : read();
    },
  };
}

/** The viewer's access level on a project: direct membership or inherited from its groups (or GitLab's answer, connected). */
export async function projectAccessLevel(prisma: PrismaClient, viewer: Viewer, project: Pick<Project, 'id' | 'groupId'>): Promise<number> {
  return membershipSource(prisma).accessLevel(viewer, project);
}

/**
 * The reference to read a project by, once it is known: standalone the reference itself; connected,
 * the mirrored row's id once GitLab showed the project to the viewer, null when GitLab hides it or
 * has none (for readers that fetch the row with more in one statement, e.g. readCodebase).
 */
export async function knownProjectWhere(prisma: PrismaClient, viewer: Viewer | null, where: ProjectWhere): Promise<ProjectWhere | null> {
  if (!gitLabConnection(prisma)) return where;
  const project = await membershipSource(prisma).findProject(where, viewer);
  return project ? { id: project.id } : null;
}

async function readAccessLevel(prisma: PrismaClient, viewer: Viewer, project: Pick<Project, 'id' | 'groupId'>): Promise<number> {
  const groups = await groupAncestry(prisma, project.groupId);
  const [direct, inherited] = await Promise.all([
    prisma.projectMember.findUnique({ where: { projectId_userId: { projectId: project.id, userId: viewer.user.id } } }),
    prisma.groupMember.findMany({ where: { userId: viewer.user.id, groupId: { in: groups } }, select: { accessLevel: true } }),
  ]);
  return Math.max(0, direct?.accessLevel ?? 0, ...inherited.map((member) => member.accessLevel));
}

/**
 * GitLab's visibility rule with a minimum role on private projects: public projects for everyone,
 * internal ones for any signed-in user, private ones for admins and members at `minimum` or above.
 */
type PolicyProject = Pick<Project, 'id' | 'groupId' | 'visibility'>;

async function hasProjectAccess(prisma: PrismaClient, viewer: Viewer | null, project: PolicyProject, minimum: number): Promise<boolean> {
  if (project.visibility === 'public') return true;
  if (!viewer) return false;
  if (project.visibility === 'internal' || viewer.user.admin) return true;
  return (await projectAccessLevel(prisma, viewer, project)) >= minimum;
}

/**
 * hasProjectAccess as a query's filter, for lists (a project picker): public projects, internal ones
 * for a signed-in user, everything for an admin, and projects where the viewer is a member at
 * `minimum` or above, directly or in the project's group or an ancestor of it. `membership` keeps
 * only the last (GitLab's `membership: true`). Readers still check each row with the policy; this
 * keeps projects the viewer may not see from taking a list's places.
 */
export async function projectsWithAccessWhere(
  prisma: PrismaClient,
  viewer: Viewer | null,
  options: { minimum: number; membership: boolean },
): Promise<Prisma.ProjectWhereInput> {
  if (!viewer) return options.membership ? { id: { in: [] } } : { visibility: 'public' };
  const groups = await prisma.$queryRaw<Array<{ id: number }>>`
    WITH RECURSIVE tree AS (
      SELECT group_id AS id FROM group_members WHERE user_id = ${viewer.user.id} AND access_level >= ${options.minimum}
      UNION
      SELECT g.id FROM groups g JOIN tree ON g.parent_id = tree.id
    )
    SELECT id FROM tree`;
  const member: Prisma.ProjectWhereInput = {
    OR: [
      { members: { some: { userId: viewer.user.id, accessLevel: { gte: options.minimum } } } },
      { groupId: { in: groups.map((group) => group.id) } },
    ],
  };
  if (options.membership) return member;
  if (viewer.user.admin) return {};
  return { OR: [{ visibility: { in: ['public', 'internal'] } }, member] };
}

async function findProjectWithAccess(
  prisma: PrismaClient,
  viewer: Viewer | null,
  where: { fullPath: string } | { id: number },
  minimum: number,
): Promise<Project | null> {
  const project = await membershipSource(prisma).findProject(where, viewer);
  if (!project) return null;
  return (await hasProjectAccess(prisma, viewer, project, minimum)) ? project : null;
}

/** GitLab's read rule: private projects for members (Guest and up). */
export const canReadProject = (prisma: PrismaClient, viewer: Viewer | null, project: PolicyProject) =>
  hasProjectAccess(prisma, viewer, project, ACCESS_LEVELS.guest);

/** The project if the viewer may read it; null both when it is missing and when it is hidden. */
export const findReadableProject = (prisma: PrismaClient, viewer: Viewer | null, where: { fullPath: string } | { id: number }) =>
  findProjectWithAccess(prisma, viewer, where, ACCESS_LEVELS.guest);

/** GitLab's read_code: private projects' code for Reporter (20) and up; a Guest may see the project but not its code. */
export const canReadCode = (prisma: PrismaClient, viewer: Viewer | null, project: PolicyProject) =>
  hasProjectAccess(prisma, viewer, project, ACCESS_LEVELS.reporter);

/** The project if the viewer may read its code; null when it is missing, hidden, or its code is not theirs to read. */
export const findCodeReadableProject = (prisma: PrismaClient, viewer: Viewer | null, where: { fullPath: string } | { id: number }) =>
  findProjectWithAccess(prisma, viewer, where, ACCESS_LEVELS.reporter);

/** The readable project, or NOT_FOUND naming the field: hidden and missing projects get the same answer. */
export async function requireReadableProject(
  prisma: PrismaClient,
  viewer: Viewer | null,
  where: { fullPath: string } | { id: number },
  field: string,
): Promise<Project> {
  const project = await findReadableProject(prisma, viewer, where);
  if (!project) throw new AppError({ code: 'NOT_FOUND', userMessage: NOT_AVAILABLE, field });
  return project;
}

const CHAT_NOT_AVAILABLE = 'Duo Chat is not available to you: it needs a GitLab Duo Pro or Duo Enterprise seat';
const CODE_SUGGESTIONS_NOT_AVAILABLE = 'Code Suggestions are not available to you: they need a GitLab Duo Pro or Duo Enterprise seat';

/** Duo Chat needs a seat (GitLab's access_duo_chat). */
export function assertDuoChat(access: DuoAccess): void {
  if (!access.chatAvailable) throw forbidden(CHAT_NOT_AVAILABLE);
}

/**
 * Why a caller may not use Code Suggestions, or null: an api or ai_features token (when `scope` is set) and a seat.
 * The scope first, as GitLab checks it when it authenticates the token: a token that may not call the endpoint
 * costs no seat look-up. Returns the access it loaded, for the caller's next checks.
 */
export async function codeSuggestionsDenial(
  viewer: Viewer,
  loadAccess: () => Promise<DuoAccess>,
  options: { scope: boolean },
): Promise<{ denial: 'scope' } | { denial: 'seat' } | { denial: null; access: DuoAccess }> {
  if (options.scope && !hasScope(viewer, 'api', 'ai_features')) return { denial: 'scope' };
  const access = await loadAccess();
  return access.codeSuggestionsAvailable ? { denial: null, access } : { denial: 'seat' };
}

/**
 * Why a caller may not have git commands generated (`glab duo ask`, GitLab's access_glab_ask_git_command), or null:
 * a Duo seat. (The endpoint takes only `api` tokens: REST's scopes are checked as the token is authenticated.)
 */
export async function gitCommandDenial(prisma: PrismaClient, viewer: Viewer): Promise<'seat' | null> {
  const access = await resolveDuoAccess({ prisma, userId: viewer.user.id, disabledCategories: [] });
  return access.chatAvailable ? null : 'seat';
}

/** Code Suggestions over GraphQL: FORBIDDEN with the reason (see codeSuggestionsDenial). */
export async function assertCodeSuggestions(
  viewer: Viewer,
  loadAccess: () => Promise<DuoAccess>,
  options: { scope: boolean },
): Promise<void> {
  const { denial } = await codeSuggestionsDenial(viewer, loadAccess, options);
  if (denial === 'scope') throw forbidden('Code Suggestions need a token with the api or ai_features scope');
  if (denial === 'seat') throw forbidden(CODE_SUGGESTIONS_NOT_AVAILABLE);
}

/**
 * A chat resource (GitLab's resourceId) the viewer may use: the viewer themself or a readable
 * project. Its gid, or NOT_FOUND naming the field: anything else, missing or hidden, looks alike.
 */
export async function requireReadableResource(prisma: PrismaClient, viewer: Viewer, resourceId: GlobalId, field: string): Promise<string> {
  if (resourceId.model === 'User' && numericId(resourceId) === viewer.user.id) return toGlobalId('User', viewer.user.id);
  const id = resourceId.model === 'Project' ? numericId(resourceId) : null;
  if (id === null) throw new AppError({ code: 'NOT_FOUND', userMessage: NOT_AVAILABLE, field });
  const project = await requireReadableProject(prisma, viewer, { id }, field);
  return toGlobalId('Project', project.id);
}

export type CodebaseCategory = 'repository' | 'directory';

export type AuthorizeCodebaseOptions = {
  prisma: PrismaClient;
  viewer: Viewer;
  /** May still be on its way: it is awaited together with the project. */
  access: DuoAccess | Promise<DuoAccess>;
  /** A full path, or a numeric id as a string. */
  project: string;
  /** Which feature the request uses: include_repository_context or include_directory_context. */
  category: CodebaseCategory;
  /** The input field to name in errors. */
  field: string;
};

/**
 * A project reference as GitLab takes one (a numeric id, or a full path); null when blank. Digits
 * beyond any row id are looked up as a path, which no project has: not found, like any missing one.
 */
export function projectWhere(reference: string): { id: number } | { fullPath: string } | null {
  const trimmed = reference.trim();
  if (!trimmed) return null;
  const id = rowId(trimmed);
  return id !== null ? { id } : { fullPath: trimmed.replace(/^\/+|\/+$/g, '') };
}

/** The project a codebase request names (a full path or a numeric id); null when it names none (blank, control characters, too long). */
export function codebaseProjectWhere(reference: string): { id: number } | { fullPath: string } | null {
  // Control characters (a NUL among them) name no project: the same answer as a missing one.
  return /[\x00-\x1f\x7f]/.test(reference) || reference.length > 2000 ? null : projectWhere(reference);
}

/**
 * Who may search a project's code: the user may read its code (read_code: Reporter and up on a
 * private project; a hidden project, or one whose code is not theirs, answers exactly like a
 * missing one), the project has Duo features on, and the user has the context feature.
 */
export async function authorizeCodebase(options: AuthorizeCodebaseOptions): Promise<Project> {
  const where = codebaseProjectWhere(options.project);
  return authorizeCodebaseProject({
    ...options,
    project: where ? membershipSource(options.prisma).findProject(where, options.viewer) : null,
  });
}

/**
 * authorizeCodebase over a project row the caller reads itself (with what else it needs in the
 * same statement): `project` is the row its reference (codebaseProjectWhere) names, null when
 * none does. Same checks, same answers.
 */
export async function authorizeCodebaseProject(
  options: Omit<AuthorizeCodebaseOptions, 'project'> & { project: Project | null | Promise<Project | null> },
): Promise<Project> {
  const readable = Promise.resolve(options.project).then(async (found) =>
    found && (await canReadCode(options.prisma, options.viewer, found)) ? found : null,
  );
  const [access, project] = await Promise.all([options.access, readable]);
  // A directory is part of the repository: either feature lets the user search one.
  const allowed =
    access.chatContextCategories.includes(options.category) ||
    (options.category === 'directory' && access.chatContextCategories.includes('repository'));
  if (!allowed) {
    throw new AppError({
      code: 'FORBIDDEN',
      userMessage:
        `${options.category.toUpperCase()} context is not available to you (include_${options.category}_context is not in ` +
        `duoChatAvailableFeatures)`,
      field: options.field,
    });
  }
  if (!project) throw new AppError({ code: 'NOT_FOUND', userMessage: NOT_AVAILABLE, field: options.field });
  if (!project.duoFeaturesEnabled)
    throw forbidden(`GitLab Duo features are turned off for ${project.fullPath}, so its code cannot be used as context`);
  return project;
}

/** What GitLab's `Project.userPermissions` (ProjectPermissions) answers, from the viewer's role. */
export type ProjectPermissions = {
  readProject: boolean;
  downloadCode: boolean;
  pushCode: boolean;
  adminProject: boolean;
  removeProject: boolean;
  readAiCatalogItem: boolean;
  adminAiCatalogItem: boolean;
};

/**
 * The viewer's abilities on a project they can read, as GitLab's project policy grants them by role:
 * read_project to every reader, download_code with read_code (Reporter and up on a private project),
 * push_code to Developers, admin_project to Maintainers, remove_project to Owners; an admin has them
 * all. There is no AI catalog here, so nobody may read or manage its items.
 */
export async function projectPermissions(prisma: PrismaClient, viewer: Viewer | null, project: PolicyProject): Promise<ProjectPermissions> {
  const level = !viewer ? 0 : viewer.user.admin ? ACCESS_LEVELS.owner : await projectAccessLevel(prisma, viewer, project);
  return {
    readProject: await canReadProject(prisma, viewer, project),
    downloadCode: await canReadCode(prisma, viewer, project),
    pushCode: level >= ACCESS_LEVELS.developer,
    adminProject: level >= ACCESS_LEVELS.maintainer,
    removeProject: level >= ACCESS_LEVELS.owner,
    readAiCatalogItem: false,
    adminAiCatalogItem: false,
  };
}
