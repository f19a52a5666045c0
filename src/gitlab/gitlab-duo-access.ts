import type { PrismaClient } from '../db/prisma';
import type { GitLabConnection } from './gitlab-connection';

/**
 * Whether DUO_ACCESS lets a user use Duo (GitLab CE has no seats): `all`; the members of any named
 * group, directly or through a parent group, any role (asked with the service token, so a job
 * without the user's token gets the same answer); or the named usernames. Reused for AUTH_CACHE_MS.
 */
export async function gitLabDuoAllowed(prisma: PrismaClient, gitlab: GitLabConnection, userId: number): Promise<boolean> {
  const rule = gitlab.config.duoAccess;
  if (rule.kind === 'all') return true;
  return gitlab.cached('duoAccess', String(userId), async () => {
    const user = await prisma.user.findUnique({ where: { id: userId }, select: { username: true, state: true, gitlabUserId: true } });
    if (!user || user.state !== 'active' || user.gitlabUserId === null) return false;
    if (rule.kind === 'users') return rule.usernames.includes(user.username);
    for (const group of rule.groups) {
      if (await gitlab.client.groupMember(group, user.gitlabUserId, { kind: 'service' })) return true;
    }
    return false;
  });
}
