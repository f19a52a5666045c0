import type { Project } from '../db/prisma';
import type { Viewer } from './viewer';

/** A project reference as the policies take one: a row id, or a full path. */
export type ProjectWhere = { id: number } | { fullPath: string };

/**
 * Where projects and the viewer's membership in them come from: the database (standalone), or the
 * GitLab the service is connected to (src/gitlab/gitlab-membership.ts). The policies
 * (src/auth/policies.ts) ask only this, then apply the same rules either way.
 */
export type MembershipSource = {
  /**
   * The project a reference names, as the viewer may know of it; null when there is none. In
   * connected mode a project GitLab hides from the viewer is null too (GitLab answers both alike),
   * and one seen for the first time is mirrored.
   */
  findProject(where: ProjectWhere, viewer: Viewer | null): Promise<Project | null>;
  /** The viewer's access level on the project: direct or inherited membership, the highest; 0 none. */
  accessLevel(viewer: Viewer, project: Pick<Project, 'id' | 'groupId'>): Promise<number>;
};
