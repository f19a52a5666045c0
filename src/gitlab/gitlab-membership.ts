import type { MembershipSource, ProjectWhere } from '../auth/membership-source';
import type { Viewer } from '../auth/viewer';
import type { PrismaClient, Project } from '../db/prisma';
import type { GitLabCredential } from './gitlab-client';
import type { GitLabConnection } from './gitlab-connection';
import { credentialKey, viewerCredential } from './gitlab-identity';
import { permissionsAccessLevel } from './gitlab-types';
import { mirrorGitLabProject, recordAccessLevel } from './mirror';

type Seen = { project: Project; level: number } | null;

/**
 * Projects and access levels from GitLab: GET /projects/:id with the viewer's own token (anonymous
 * without one) says whether they may see the project and, in `permissions`, their project and group
 * access (the higher counts; inherited group membership included). The answer is reused for
 * AUTH_CACHE_MS per token and reference. A project is mirrored the first time it is seen, and the
 * level GitLab gave is kept as the user's membership row for work done without their token (a chat
 * job right after the request), which reads only mirrored rows.
 */
export function gitLabMembership(prisma: PrismaClient, gitlab: GitLabConnection): MembershipSource {
  const lookUp = (credential: GitLabCredential, viewer: Viewer | null, reference: number | string): Promise<Seen> =>
    gitlab.cached('projects', `${credentialKey(credential)}|${reference}`, async (): Promise<Seen> => {
      const found = await gitlab.client.project(reference, credential);
      if (!found) {
        if (viewer) {
          const known = await prisma.project.findFirst({
            where: typeof reference === 'number' ? { gitlabProjectId: reference } : { fullPath: reference, gitlabProjectId: { not: null } },
            select: { id: true },
          });
          if (known) await recordAccessLevel(prisma, { userId: viewer.user.id, projectId: known.id, level: 0 });
        }
        return null;
      }
      const project = await mirrorGitLabProject(prisma, found);
      const level = permissionsAccessLevel(found);
      if (viewer) await recordAccessLevel(prisma, { userId: viewer.user.id, projectId: project.id, level });
      return { project, level };
    });

  return {
    async findProject(where: ProjectWhere, viewer: Viewer | null) {
      const credential = viewerCredential(viewer);
      // Without the user's token (a job): only projects already mirrored.
      if (!credential) return prisma.project.findFirst({ where: { ...where, gitlabProjectId: { not: null } } });
      const seen = await lookUp(credential, viewer, 'id' in where ? where.id : where.fullPath);
      return seen?.project ?? null;
    },
    async accessLevel(viewer: Viewer, project: Pick<Project, 'id' | 'groupId'>) {
      const gitlabProjectId =
        'gitlabProjectId' in project
          ? (project.gitlabProjectId as number | null)
          : ((await prisma.project.findUnique({ where: { id: project.id }, select: { gitlabProjectId: true } }))?.gitlabProjectId ?? null);
      // A row GitLab does not know (left from standalone use) gives nobody access in connected mode.
      if (gitlabProjectId === null) return 0;
      const credential = viewerCredential(viewer);
      if (!credential) {
        const member = await prisma.projectMember.findUnique({
          where: { projectId_userId: { projectId: project.id, userId: viewer.user.id } },
          select: { accessLevel: true },
        });
        return member?.accessLevel ?? 0;
      }
      return (await lookUp(credential, viewer, gitlabProjectId))?.level ?? 0;
    },
  };
}
