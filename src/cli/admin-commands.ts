import { addMember, assignSeat, buyAddOn, createGroup, createProject, updateProject } from '../namespaces/namespaces.service';
import { AppError, badInput } from '../errors';
import { GitLabClient } from '../gitlab/gitlab-client';
import { registerPushWebhooks } from '../gitlab/register-push-webhooks';
import type { PrismaClient } from '../db/prisma';
import { createToken, createUser, revokeToken, setUserState } from '../users/users.service';
import { instanceStatus } from './instance-status.command';
import type { CommandContext } from './run-command';

type Flags = Record<string, string | boolean | undefined>;

export type AdminCommand = {
  summary: string;
  /** Flag names with a short help; a trailing `!` marks a required one. */
  flags: Record<string, string>;
  /** Returns what to print as one JSON line (or prints itself and returns nothing). */
  run(prisma: PrismaClient, flags: Flags, context: CommandContext): Promise<unknown>;
};

const text = (flags: Flags, name: string): string | undefined => {
  const value = flags[name];
  if (value === true) throw badInput(`--${name} needs a value`, name);
  return value === false ? undefined : value;
};

const bool = (flags: Flags, name: string): boolean | undefined => {
  const value = flags[name];
  if (value === undefined) return undefined;
  if (value === true || value === 'true') return true;
  if (value === 'false') return false;
  throw badInput(`--${name} must be true or false`, name);
};

export const ADMIN_COMMANDS: Record<string, AdminCommand> = {
  status: {
    summary: 'Show the instance: version, database, Redis, queues and workers, indexes by state, model',
    flags: { json: 'one JSON line instead of text (flag)' },
    run: (_prisma, flags, context) => instanceStatus(context, { json: flags.json === true }),
  },
  'create-user': {
    summary: 'Create a user',
    flags: { username: 'login name!', name: 'display name', email: 'email address', admin: 'make an instance admin (flag)' },
    run: async (prisma, flags) => {
      const user = await createUser(prisma, {
        username: text(flags, 'username')!,
        name: text(flags, 'name'),
        email: text(flags, 'email'),
        admin: bool(flags, 'admin'),
      });
      return { id: user.id, username: user.username, admin: user.admin };
    },
  },
  'block-user': {
    summary: 'Block a user: their tokens stop working',
    flags: { username: 'login name!' },
    run: async (prisma, flags) => ({
      username: (await setUserState(prisma, text(flags, 'username')!, 'blocked')).username,
      state: 'blocked',
    }),
  },
  'unblock-user': {
    summary: 'Unblock a user',
    flags: { username: 'login name!' },
    run: async (prisma, flags) => ({
      username: (await setUserState(prisma, text(flags, 'username')!, 'active')).username,
      state: 'active',
    }),
  },
  'create-token': {
    summary: 'Create a personal access token and print it (shown only this once)',
    flags: {
      username: 'owner!',
      name: 'token name',
      scopes: 'comma-separated: api, read_api, ai_features, mcp (default api)',
      'expires-at': 'YYYY-MM-DD',
    },
    run: async (prisma, flags) => {
      const created = await createToken(prisma, {
        username: text(flags, 'username')!,
        name: text(flags, 'name'),
        scopes: text(flags, 'scopes')
          ?.split(',')
          .map((scope) => scope.trim())
          .filter(Boolean),
        expiresAt: text(flags, 'expires-at'),
      });
      return {
        id: created.id,
        token: created.token,
        scopes: created.scopes,
        expires_at: created.expiresAt?.toISOString().slice(0, 10) ?? null,
      };
    },
  },
  'revoke-token': {
    summary: 'Revoke a token by id or by the token itself',
    flags: { id: 'token id', token: 'the token' },
    run: async (prisma, flags) => {
      const id = text(flags, 'id');
      await revokeToken(prisma, { id: id ? Number(id) : undefined, token: text(flags, 'token') });
      return { revoked: true };
    },
  },
  'create-group': {
    summary: 'Create a group (top-level groups have a plan)',
    flags: {
      path: 'group path!',
      name: 'display name',
      plan: 'free, premium or ultimate (default free)',
      parent: 'full path of the parent group',
    },
    run: async (prisma, flags) => {
      const group = await createGroup(prisma, {
        path: text(flags, 'path')!,
        name: text(flags, 'name'),
        plan: text(flags, 'plan'),
        parentPath: text(flags, 'parent'),
      });
      return { id: group.id, full_path: group.fullPath, plan: group.plan };
    },
  },
  'buy-addon': {
    summary: 'Buy or resize a Duo add-on on a top-level group',
    flags: { group: 'top-level group path!', 'add-on': 'duo_pro or duo_enterprise!', seats: 'seat count!', 'expires-at': 'YYYY-MM-DD' },
    run: async (prisma, flags) => {
      const purchase = await buyAddOn(prisma, {
        groupPath: text(flags, 'group')!,
        addOn: text(flags, 'add-on')!,
        seats: text(flags, 'seats')!,
        expiresAt: text(flags, 'expires-at'),
      });
      return { id: purchase.id, add_on: purchase.addOn, seats: purchase.seatCount };
    },
  },
  'assign-seat': {
    summary: "Assign one of a group's add-on seats to a user",
    flags: { group: 'top-level group path!', 'add-on': 'duo_pro or duo_enterprise!', username: 'user!' },
    run: async (prisma, flags) => {
      await assignSeat(prisma, { groupPath: text(flags, 'group')!, addOn: text(flags, 'add-on')!, username: text(flags, 'username')! });
      return { assigned: true };
    },
  },
  'create-project': {
    summary: 'Create a project and print its webhook secret (shown only this once)',
    flags: {
      path: 'group/project!',
      name: 'display name',
      repository: 'local path or http(s) URL of its git repository',
      'default-branch': 'default main',
      visibility: 'private, internal or public (default private)',
      'duo-features-enabled': 'true or false (default true)',
      'webhook-secret': 'set the secret instead of generating one',
    },
    run: async (prisma, flags) => {
      const { project, webhookSecret } = await createProject(prisma, {
        fullPath: text(flags, 'path')!,
        name: text(flags, 'name'),
        repository: text(flags, 'repository'),
        defaultBranch: text(flags, 'default-branch'),
        visibility: text(flags, 'visibility'),
        duoFeaturesEnabled: bool(flags, 'duo-features-enabled'),
        webhookSecret: text(flags, 'webhook-secret'),
      });
      return { id: project.id, full_path: project.fullPath, webhook_secret: webhookSecret };
    },
  },
  'update-project': {
    summary: "Change a project's repository, Duo switch, context exclusions or webhook secret",
    flags: {
      path: 'group/project!',
      repository: 'local path or http(s) URL of its git repository',
      'duo-features-enabled': 'true or false',
      exclusions: 'context exclusions in gitignore syntax, comma-separated (empty clears them)',
      'webhook-secret': 'set the webhook secret',
      'new-webhook-secret': 'generate a new webhook secret and print it once (flag)',
    },
    run: async (prisma, flags) => {
      const exclusions = text(flags, 'exclusions');
      const { project, webhookSecret } = await updateProject(prisma, {
        fullPath: text(flags, 'path')!,
        repository: text(flags, 'repository'),
        duoFeaturesEnabled: bool(flags, 'duo-features-enabled'),
        contextExclusions:
          exclusions === undefined
            ? undefined
            : exclusions
                .split(',')
                .map((pattern) => pattern.trim())
                .filter(Boolean),
        webhookSecret: flags['new-webhook-secret'] === true ? true : text(flags, 'webhook-secret'),
      });
      return {
        id: project.id,
        full_path: project.fullPath,
        repository: project.repositoryUrl,
        duo_features_enabled: project.duoFeaturesEnabled,
        context_exclusions: project.contextExclusions,
        ...(webhookSecret ? { webhook_secret: webhookSecret } : {}),
      };
    },
  },
  'register-webhooks': {
    summary: 'With GITLAB_URL: register the push webhook on a GitLab project, or on every project of a group and its subgroups',
    flags: {
      project: 'GitLab project id or full path',
      group: 'GitLab group id or full path',
      url: 'the hook URL GitLab calls (default EXTERNAL_URL + /api/v4/webhooks/push)',
      'ssl-verification': "true or false: GitLab checks the hook URL's certificate (default true)",
    },
    run: async (prisma, flags, context) => {
      const { config, logger } = context;
      if (!config.gitlab) throw badInput('register-webhooks needs GITLAB_URL (connected mode)');
      if (!config.gitlab.serviceToken)
        throw badInput('register-webhooks needs GITLAB_SERVICE_TOKEN (scope api, Maintainer on the projects)');
      const project = text(flags, 'project');
      const group = text(flags, 'group');
      if (Boolean(project) === Boolean(group)) throw badInput('give one of --project or --group', project ? 'group' : 'project');
      const hookUrl =
        text(flags, 'url') ?? (config.externalUrl ? `${config.externalUrl.replace(/\/+$/, '')}/api/v4/webhooks/push` : undefined);
      if (!hookUrl) throw badInput('set EXTERNAL_URL (the URL GitLab reaches this service at) or pass --url', 'url');
      const gitlab = new GitLabClient({ ...config.gitlab, logger });
      const result = await registerPushWebhooks({
        prisma,
        gitlab,
        logger,
        target: project ? { project } : { group: group! },
        hookUrl,
        enableSslVerification: bool(flags, 'ssl-verification'),
      });
      process.stdout.write(`${JSON.stringify(result)}\n`);
      if (result.failed.length > 0) {
        const reasons = result.failed.map((failure) => `${failure.full_path}: ${failure.error}`).join('; ');
        throw new AppError({
          code: 'BAD_USER_INPUT',
          userMessage: `the hook was not registered on ${result.failed.length} project(s): ${reasons}`,
        });
      }
    },
  },
  'add-member': {
    summary: 'Add a user to a group or project',
    flags: {
      path: 'group or project full path!',
      username: 'user!',
      'access-level': 'guest, reporter, developer, maintainer, owner or 10-50!',
    },
    run: async (prisma, flags) =>
      addMember(prisma, { fullPath: text(flags, 'path')!, username: text(flags, 'username')!, accessLevel: text(flags, 'access-level')! }),
  },
};

export function usage(): string {
  const lines = ['Usage: npm run admin -- <command> [--flag value ...]', '', 'Commands:'];
  for (const [name, command] of Object.entries(ADMIN_COMMANDS)) {
    lines.push(`  ${name.padEnd(15)} ${command.summary}`);
    for (const [flag, help] of Object.entries(command.flags)) lines.push(`      --${flag.padEnd(22)} ${help.replace(/!$/, ' (required)')}`);
  }
  return lines.join('\n');
}

/** Checks flags against the command's list before anything touches the database. */
export function checkFlags(command: AdminCommand, flags: Flags): void {
  for (const name of Object.keys(flags)) {
    if (!(name in command.flags)) throw badInput(`unknown flag --${name}`, name);
  }
  for (const [name, help] of Object.entries(command.flags)) {
    if (help.endsWith('!') && (flags[name] === undefined || flags[name] === true)) throw badInput(`--${name} is required`, name);
  }
}
