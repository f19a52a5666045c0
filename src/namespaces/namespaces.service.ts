import { randomBytes } from 'node:crypto';
import { forgetCachedAuth } from '../auth/auth-cache';
import { ACCESS_LEVELS, type AccessLevelName } from '../auth/policies';
import { digestToken } from '../auth/tokens';
import { withConflict } from '../db/errors';
import type { AddOnPurchase, Group, PrismaClient, Project } from '../db/prisma';
import { AppError, badInput, notFound } from '../errors';
import { findUserByUsername } from '../users/users.service';
import { requireEnum, requireFutureDate, requireNonBlank, requirePathSegment, requirePositiveInt } from '../validation';

const PLANS = ['free', 'premium', 'ultimate'] as const;
const ADD_ONS = ['duo_pro', 'duo_enterprise'] as const;
const VISIBILITIES = ['private', 'internal', 'public'] as const;

export type CreateGroupInput = { path: string; name?: string; plan?: string; parentPath?: string };

export async function createGroup(prisma: PrismaClient, input: CreateGroupInput): Promise<Group> {
  const path = requirePathSegment(input.path, 'path');
  const parent = input.parentPath ? await findGroup(prisma, input.parentPath) : null;
  const plan = requireEnum(input.plan ?? 'free', PLANS, 'plan');
  if (parent && input.plan) throw badInput('Only top-level groups have a plan', 'plan');
  return withConflict('A group with that path already exists', () =>
    prisma.group.create({
      data: {
        path,
        fullPath: parent ? `${parent.fullPath}/${path}` : path,
        name: requireNonBlank(input.name ?? path, 'name'),
        plan,
        parentId: parent?.id ?? null,
      },
    }),
  );
}

export async function findGroup(prisma: PrismaClient, fullPath: string): Promise<Group> {
  const group = await prisma.group.findUnique({ where: { fullPath } });
  if (!group) throw notFound(`Group ${fullPath} not found`);
  return group;
}

export type BuyAddOnInput = { groupPath: string; addOn: string; seats: string | number; expiresAt?: string };

/** Buys (or resizes) a Duo add-on on a top-level group. */
export async function buyAddOn(prisma: PrismaClient, input: BuyAddOnInput): Promise<AddOnPurchase> {
  const group = await findGroup(prisma, input.groupPath);
  if (group.parentId !== null) throw badInput('Add-ons are bought for top-level groups', 'group');
  const addOn = requireEnum(input.addOn, ADD_ONS, 'add_on');
  const seatCount = requirePositiveInt(input.seats, 'seats');
  const expiresAt = input.expiresAt ? requireFutureDate(input.expiresAt, 'expires_at') : null;
  const purchase = await prisma.addOnPurchase.upsert({
    where: { groupId_addOn: { groupId: group.id, addOn } },
    create: { groupId: group.id, addOn, seatCount, expiresAt },
    update: { seatCount, expiresAt },
  });
  forgetCachedAuth(prisma);
  return purchase;
}

export type AssignSeatInput = { groupPath: string; addOn: string; username: string };

export async function assignSeat(prisma: PrismaClient, input: AssignSeatInput): Promise<void> {
  const group = await findGroup(prisma, input.groupPath);
  const addOn = requireEnum(input.addOn, ADD_ONS, 'add_on');
  const user = await findUserByUsername(prisma, input.username);
  const purchase = await prisma.addOnPurchase.findUnique({ where: { groupId_addOn: { groupId: group.id, addOn } } });
  if (!purchase) throw notFound(`Group ${group.fullPath} has no ${addOn} purchase`);
  await prisma.$transaction(async (transaction) => {
    const existing = await transaction.seatAssignment.findUnique({
      where: { purchaseId_userId: { purchaseId: purchase.id, userId: user.id } },
    });
    if (existing) return;
    const used = await transaction.seatAssignment.count({ where: { purchaseId: purchase.id } });
    if (used >= purchase.seatCount) {
      throw new AppError({ code: 'CONFLICT', userMessage: `All ${purchase.seatCount} ${addOn} seats of ${group.fullPath} are assigned` });
    }
    await transaction.seatAssignment.create({ data: { purchaseId: purchase.id, userId: user.id } });
  });
  forgetCachedAuth(prisma);
}

export type CreateProjectInput = {
  /** group/sub/project */
  fullPath: string;
  name?: string;
  defaultBranch?: string;
  visibility?: string;
  duoFeaturesEnabled?: boolean;
  /** Local path or http(s) URL of the git repository. */
  repository?: string;
  /** Default: a new random secret. */
  webhookSecret?: string;
};

export async function createProject(prisma: PrismaClient, input: CreateProjectInput): Promise<{ project: Project; webhookSecret: string }> {
  const segments = (input.fullPath ?? '').split('/');
  if (segments.length < 2) throw badInput('project path must be group/project', 'path');
  const path = requirePathSegment(segments.pop(), 'path');
  const group = await findGroup(prisma, segments.join('/'));
  const webhookSecret = input.webhookSecret ?? randomBytes(24).toString('base64url');
  if (webhookSecret.length < 16) throw badInput('webhook secret must be at least 16 characters', 'webhook_secret');
  const defaultBranch = requireNonBlank(input.defaultBranch ?? 'main', 'default_branch');
  if (!/^[\w][\w./-]*$/.test(defaultBranch) || defaultBranch.includes('..'))
    throw badInput('default_branch is not a valid branch name', 'default_branch');
  const project = await withConflict('A project with that path already exists', () =>
    prisma.project.create({
      data: {
        groupId: group.id,
        path,
        fullPath: `${group.fullPath}/${path}`,
        name: requireNonBlank(input.name ?? path, 'name'),
        defaultBranch,
        visibility: requireEnum(input.visibility ?? 'private', VISIBILITIES, 'visibility'),
        duoFeaturesEnabled: input.duoFeaturesEnabled ?? true,
        repositoryUrl: input.repository ?? null,
        webhookSecretDigest: digestToken(webhookSecret),
      },
    }),
  );
  return { project, webhookSecret };
}

export type AddMemberInput = { fullPath: string; username: string; accessLevel: string | number };

/** Adds (or changes) a member of a project, or of a group when no project has that path. */
export async function addMember(prisma: PrismaClient, input: AddMemberInput): Promise<{ kind: 'project' | 'group'; accessLevel: number }> {
  const user = await findUserByUsername(prisma, input.username);
  const accessLevel = parseAccessLevel(input.accessLevel);
  const project = await prisma.project.findUnique({ where: { fullPath: input.fullPath } });
  if (project) {
    await prisma.projectMember.upsert({
      where: { projectId_userId: { projectId: project.id, userId: user.id } },
      create: { projectId: project.id, userId: user.id, accessLevel },
      update: { accessLevel },
    });
    forgetCachedAuth(prisma);
    return { kind: 'project', accessLevel };
  }
  const group = await prisma.group.findUnique({ where: { fullPath: input.fullPath } });
  if (!group) throw notFound(`No group or project ${input.fullPath}`);
  await prisma.groupMember.upsert({
    where: { groupId_userId: { groupId: group.id, userId: user.id } },
    create: { groupId: group.id, userId: user.id, accessLevel },
    update: { accessLevel },
  });
  forgetCachedAuth(prisma);
  return { kind: 'group', accessLevel };
}

export function parseAccessLevel(value: string | number): number {
  if (typeof value === 'string' && value in ACCESS_LEVELS) return ACCESS_LEVELS[value as AccessLevelName];
  const number = Number(value);
  if (!(Object.values(ACCESS_LEVELS) as number[]).includes(number)) {
    throw badInput(
      `access level must be one of ${Object.entries(ACCESS_LEVELS)
        .map(([name, level]) => `${name} (${level})`)
        .join(', ')}`,
      'access_level',
    );
  }
  return number;
}

export type UpdateProjectInput = {
  fullPath: string;
  /** Local path or http(s) URL of the git repository. */
  repository?: string;
  duoFeaturesEnabled?: boolean;
  /** Context exclusions in gitignore syntax; replaces the list. */
  contextExclusions?: string[];
  /** true: generate a new webhook secret; a string: set it. */
  webhookSecret?: string | true;
};

/** Changes a project's repository, Duo switch, context exclusions or webhook secret (the new secret is returned once). */
export async function updateProject(
  prisma: PrismaClient,
  input: UpdateProjectInput,
): Promise<{ project: Project; webhookSecret: string | null }> {
  const existing = await prisma.project.findUnique({ where: { fullPath: input.fullPath } });
  if (!existing) throw new AppError({ code: 'NOT_FOUND', userMessage: `Project ${input.fullPath} not found`, field: 'path' });
  const webhookSecret = input.webhookSecret === true ? randomBytes(24).toString('base64url') : (input.webhookSecret ?? null);
  if (webhookSecret !== null && webhookSecret.length < 16)
    throw badInput('webhook secret must be at least 16 characters', 'webhook_secret');
  for (const pattern of input.contextExclusions ?? []) {
    if (pattern.length > 500 || /[\0\n]/.test(pattern))
      throw badInput(`exclusion pattern ${JSON.stringify(pattern.slice(0, 40))} is not a valid gitignore pattern`, 'exclusions');
  }
  const project = await prisma.project.update({
    where: { id: existing.id },
    data: {
      ...(input.repository !== undefined ? { repositoryUrl: input.repository.trim() || null } : {}),
      ...(input.duoFeaturesEnabled !== undefined ? { duoFeaturesEnabled: input.duoFeaturesEnabled } : {}),
      ...(input.contextExclusions !== undefined ? { contextExclusions: input.contextExclusions } : {}),
      ...(webhookSecret !== null ? { webhookSecretDigest: digestToken(webhookSecret) } : {}),
    },
  });
  return { project, webhookSecret };
}
