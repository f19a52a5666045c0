import { ACCESS_LEVELS } from '../auth/policies';
import type { PrismaClient } from '../db/prisma';
import { PROJECT_ROOT } from '../paths';
import { createToken } from '../users/users.service';

export const DEMO = { username: 'demo', group: 'demo-group', project: 'demo-group/duo-slice' } as const;

export type DemoSeed = { token: string; username: string; project: string };

/**
 * Creates (or completes) the demo user with a Duo Enterprise seat on an Ultimate group and a demo
 * project whose repository is this checkout, then issues a new token: tokens are shown only once.
 */
export async function seedDemo(prisma: PrismaClient): Promise<DemoSeed> {
  const user = await prisma.user.upsert({
    where: { username: DEMO.username },
    create: { username: DEMO.username, name: 'Demo User', email: 'demo@example.com' },
    update: { state: 'active' },
  });
  const group = await prisma.group.upsert({
    where: { fullPath: DEMO.group },
    create: { path: DEMO.group, fullPath: DEMO.group, name: 'Demo Group', plan: 'ultimate' },
    update: { plan: 'ultimate' },
  });
  const purchase = await prisma.addOnPurchase.upsert({
    where: { groupId_addOn: { groupId: group.id, addOn: 'duo_enterprise' } },
    create: { groupId: group.id, addOn: 'duo_enterprise', seatCount: 10 },
    update: { expiresAt: null },
  });
  await prisma.seatAssignment.upsert({
    where: { purchaseId_userId: { purchaseId: purchase.id, userId: user.id } },
    create: { purchaseId: purchase.id, userId: user.id },
    update: {},
  });
  await prisma.groupMember.upsert({
    where: { groupId_userId: { groupId: group.id, userId: user.id } },
    create: { groupId: group.id, userId: user.id, accessLevel: ACCESS_LEVELS.owner },
    update: { accessLevel: ACCESS_LEVELS.owner },
  });
  await prisma.project.upsert({
    where: { fullPath: DEMO.project },
    create: {
      groupId: group.id,
      path: 'duo-slice',
      fullPath: DEMO.project,
      name: 'duo-slice',
      defaultBranch: 'main',
      repositoryUrl: PROJECT_ROOT,
    },
    update: {},
  });
  const { token } = await createToken(prisma, { username: DEMO.username, name: 'demo', scopes: ['api'] });
  return { token, username: DEMO.username, project: DEMO.project };
}
