import type { PrismaClient, Project } from '../db/prisma';
import { authCaches } from './auth-cache';
import type { Viewer } from './viewer';

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

/** The viewer's access level on a project: direct membership or inherited from its groups. */
export async function projectAccessLevel(prisma: PrismaClient, viewer: Viewer, project: Pick<Project, 'id' | 'groupId'>): Promise<number> {
  const cache = authCaches(prisma)?.accessLevels;
  const read = () => readAccessLevel(prisma, viewer, project);
  return cache ? cache.get(`${viewer.user.id}|${project.id}|${project.groupId}`, read) : read();
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
 * GitLab's read rule: public projects for everyone, internal ones for any signed-in user, private
 * ones for members (guest and up) and admins.
 */
export async function canReadProject(prisma: PrismaClient, viewer: Viewer | null, project: Project): Promise<boolean> {
  if (project.visibility === 'public') return true;
  if (!viewer) return false;
  if (project.visibility === 'internal' || viewer.user.admin) return true;
  return (await projectAccessLevel(prisma, viewer, project)) >= ACCESS_LEVELS.guest;
}

/** The project if the viewer may read it; null both when it is missing and when it is hidden. */
export async function findReadableProject(
  prisma: PrismaClient,
  viewer: Viewer | null,
  where: { fullPath: string } | { id: number },
): Promise<Project | null> {
  const project = await prisma.project.findUnique({ where });
  if (!project) return null;
  return (await canReadProject(prisma, viewer, project)) ? project : null;
}
