import { CONTEXT_CATEGORIES, type ContextCategory } from '../config';
import { authCaches, type TtlCache } from '../auth/auth-cache';
import type { AddOnName, PrismaClient } from '../db/prisma';
import { isFeatureFlagEnabled } from '../instance';
import { gitLabConnection } from '../gitlab/gitlab-connection';
import { gitLabDuoAllowed } from '../gitlab/gitlab-duo-access';

/** Which chat context categories each Duo add-on includes. */
export const ADD_ON_CONTEXT_CATEGORIES: Record<AddOnName, readonly ContextCategory[]> = {
  duo_pro: ['file', 'snippet', 'local_git', 'terminal', 'dependency', 'repository', 'directory'],
  duo_enterprise: ['file', 'snippet', 'local_git', 'terminal', 'dependency', 'repository', 'directory', 'merge_request', 'issue'],
};

export type DuoAccess = {
  addOns: readonly AddOnName[];
  chatAvailable: boolean;
  codeSuggestionsAvailable: boolean;
  /** Context categories the user may attach to chat, in GitLab's order. */
  chatContextCategories: readonly ContextCategory[];
};

export type DuoAccessOptions = {
  prisma: PrismaClient;
  userId: number;
  /** Categories the instance turned off (DUO_DISABLED_CONTEXT_CATEGORIES). */
  disabledCategories: readonly ContextCategory[];
  now?: Date;
};

export const NO_DUO_ACCESS: DuoAccess = Object.freeze({
  addOns: [],
  chatAvailable: false,
  codeSuggestionsAvailable: false,
  chatContextCategories: [],
});

/**
 * Duo is available to a user who holds a seat of a current Duo Pro or Duo Enterprise purchase on a
 * top-level group with a Premium or Ultimate plan; connected to GitLab (which has no seats in CE),
 * to whom DUO_ACCESS names, with DUO_ADD_ON's features.
 */
export async function resolveDuoAccess(options: DuoAccessOptions): Promise<DuoAccess> {
  const gitlab = gitLabConnection(options.prisma);
  if (gitlab) {
    const allowed = await gitLabDuoAllowed(options.prisma, gitlab, options.userId);
    return allowed ? accessFor([gitlab.config.duoAddOn], options.disabledCategories) : NO_DUO_ACCESS;
  }
  // A given `now` asks about that moment: only the present is cached (auth-cache.ts).
  const cache = options.now ? undefined : (authCaches(options.prisma)?.duoAccess as TtlCache<DuoAccess> | undefined);
  return cache
    ? cache.get(`${options.userId}|${options.disabledCategories.join(',')}`, () => readDuoAccess(options))
    : readDuoAccess(options);
}

async function readDuoAccess(options: DuoAccessOptions): Promise<DuoAccess> {
  const now = options.now ?? new Date();
  const seats = await options.prisma.seatAssignment.findMany({
    where: {
      userId: options.userId,
      purchase: {
        startsAt: { lte: now },
        OR: [{ expiresAt: null }, { expiresAt: { gt: now } }],
        group: { parentId: null, plan: { in: ['premium', 'ultimate'] } },
      },
    },
    select: { purchase: { select: { addOn: true } } },
  });
  const addOns = [...new Set(seats.map((seat) => seat.purchase.addOn))];
  if (addOns.length === 0) return NO_DUO_ACCESS;
  return accessFor(addOns, options.disabledCategories);
}

/** What holding these add-ons gives: Duo Chat, Code Suggestions and the add-ons' context categories the instance has on. */
function accessFor(addOns: readonly AddOnName[], disabledCategories: readonly ContextCategory[]): DuoAccess {
  const allowed = new Set(addOns.flatMap((addOn) => ADD_ON_CONTEXT_CATEGORIES[addOn]));
  const chatContextCategories = CONTEXT_CATEGORIES.filter((category) => allowed.has(category) && !disabledCategories.includes(category));
  return { addOns, chatAvailable: true, codeSuggestionsAvailable: true, chatContextCategories };
}

/** GitLab's names for the categories in `currentUser.duoChatAvailableFeatures`. */
export function chatFeatureNames(access: DuoAccess): string[] {
  return access.chatContextCategories.map((category) => `include_${category}_context`);
}

/**
 * GitLab's code-suggestion context categories this instance can use: open tabs and imports reach
 * the completions endpoint as `context` items. Repository X-Ray is left out: there are no X-Ray
 * reports here. The language server gathers context only when the instance flag
 * `code_suggestions_context` is on too, so without it the list is empty.
 */
export const CODE_SUGGESTIONS_CONTEXTS = ['open_tabs', 'imports'] as const;

export function codeSuggestionsContextNames(access: DuoAccess, enabledFlags: readonly string[]): string[] {
  if (!access.codeSuggestionsAvailable || !isFeatureFlagEnabled(enabledFlags, 'code_suggestions_context')) return [];
  return [...CODE_SUGGESTIONS_CONTEXTS];
}
