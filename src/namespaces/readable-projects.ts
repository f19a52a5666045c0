import { ACCESS_LEVELS, canReadProject, projectAccessLevel, projectsWithAccessWhere } from '../auth/policies';
import type { Viewer } from '../auth/viewer';
import type { PrismaClient, Project } from '../db/prisma';

export type ReadableProjectsOptions = {
  prisma: PrismaClient;
  viewer: Viewer | null;
  /** Only projects the viewer is a member of (directly or through a group), as GitLab's `membership: true`. Default false. */
  membership?: boolean;
  /** Part of the path or name, case-insensitive. */
  search?: string | null;
  /** Projects looked at, at most (the list is for pickers, not for exports). Default 1000. */
  scanLimit?: number;
};

/** The projects a viewer may read (GitLab's `projects` query), by full path. */
export async function readableProjects(options: ReadableProjectsOptions): Promise<Project[]> {
  const search = options.search?.trim();
  const viewer = options.viewer;
  if (options.membership && !viewer) return [];
  // Only projects the viewer may see take the scan's places: hidden ones neither crowd visible ones out nor show in
  // how many come back.
  const visible = await projectsWithAccessWhere(options.prisma, viewer, {
    minimum: ACCESS_LEVELS.guest,
    membership: options.membership ?? false,
  });
  const candidates = await options.prisma.project.findMany({
    where: {
      AND: [
        visible,
        search
          ? { OR: [{ fullPath: { contains: search, mode: 'insensitive' } }, { name: { contains: search, mode: 'insensitive' } }] }
          : {},
      ],
    },
    orderBy: { fullPath: 'asc' },
    take: options.scanLimit ?? 1000,
  });
  const allowed = await Promise.all(
    candidates.map((project) =>
      options.membership && viewer
        ? projectAccessLevel(options.prisma, viewer, project).then((level) => level >= ACCESS_LEVELS.guest)
        : canReadProject(options.prisma, viewer, project),
    ),
  );
  return candidates.filter((_project, index) => allowed[index]);
}
