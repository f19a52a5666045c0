import { randomBytes } from 'node:crypto';
import type { PrismaClient } from '../../src/db/prisma';
import { addMember, assignSeat, buyAddOn, createGroup, createProject } from '../../src/namespaces/namespaces.service';
import { createToken, createUser } from '../../src/users/users.service';

/** A short unique suffix so fixtures never collide within a database. */
export const unique = (prefix: string) => `${prefix}${randomBytes(4).toString('hex')}`;

export type UserWithToken = { id: number; username: string; token: string };

/** A user and an api token, made through the same services the admin commands use. */
export async function userWithToken(
  prisma: PrismaClient,
  options: { scopes?: string[]; admin?: boolean; expiresAt?: string } = {},
): Promise<UserWithToken> {
  const user = await createUser(prisma, { username: unique('user'), admin: options.admin });
  const { token } = await createToken(prisma, { username: user.username, scopes: options.scopes, expiresAt: options.expiresAt });
  return { id: user.id, username: user.username, token };
}

/** A top-level group with a plan and, optionally, an add-on seat for the user. */
export async function groupWithSeat(prisma: PrismaClient, options: { plan: string; addOn?: string; username?: string }): Promise<string> {
  const group = await createGroup(prisma, { path: unique('group'), plan: options.plan });
  if (options.addOn) {
    await buyAddOn(prisma, { groupPath: group.fullPath, addOn: options.addOn, seats: 5 });
    if (options.username) await assignSeat(prisma, { groupPath: group.fullPath, addOn: options.addOn, username: options.username });
  }
  return group.fullPath;
}

export async function projectIn(
  prisma: PrismaClient,
  groupPath: string,
  options: { visibility?: string; member?: { username: string; accessLevel: string } } = {},
) {
  const { project } = await createProject(prisma, { fullPath: `${groupPath}/${unique('project')}`, visibility: options.visibility });
  if (options.member)
    await addMember(prisma, { fullPath: project.fullPath, username: options.member.username, accessLevel: options.member.accessLevel });
  return project;
}
