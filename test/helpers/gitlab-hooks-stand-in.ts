/**
 * The GitLab stand-in's webhooks (mounted by gitlab-stand-in.ts): a project's hooks as GitLab's API
 * manages them, a group's projects as GitLab lists them, system hooks, and the push events GitLab
 * delivers to both after a push.
 *
 *   GET  /api/v4/projects/:id/hooks                  Maintainer; answers checked with GitLab's project_hooks.json
 *   POST /api/v4/projects/:id/hooks                  Maintainer and the api scope; 201 with GitLab's project_hook.json
 *   PUT  /api/v4/projects/:id/hooks/:hook_id         as POST; 200
 *   GET  /api/v4/groups/:id/projects                 include_subgroups, with_shared, page, per_page; X-Next-Page and X-Total
 *
 * A hook's secret token is kept but never answered (GitLab answers none). Deliveries go out as
 * GitLab's do: POST with `X-Gitlab-Event: Push Hook` (project hooks) or `System Hook` (system hooks,
 * whose body adds GitLab's system hook fields), `X-Gitlab-Token`, `X-Gitlab-Event-UUID`,
 * `X-Gitlab-Instance`, and GitLab's push event body (from GitLab's webhook documentation: GitLab keeps
 * no JSON schema for webhook bodies).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Handler, Reply, StandInGroup, StandInProject, StandInToken, StandInUser } from './gitlab-stand-in';

export type StandInHook = {
  id: number;
  projectId: number;
  url: string;
  token: string | null;
  pushEvents: boolean;
  enableSslVerification: boolean;
  createdAt: Date;
};

export type StandInSystemHook = { id: number; url: string; token: string | null };

/** One delivery of an event to a hook, with our service's answer. */
export type Delivery = { hook: 'project' | 'system'; url: string; event: string; status: number; body: unknown };

export type StandInHooks = {
  /** The project's hooks as GitLab keeps them (tests check that registration did not duplicate one). */
  of(project: StandInProject): StandInHook[];
  /** A system hook, as an administrator adds one in GitLab's Admin area (push events on). */
  addSystemHook(options: { url: string; token: string }): StandInSystemHook;
  /**
   * What GitLab does after a push to a branch: the push event to the project's hooks with push events
   * on, and to every system hook. Returns each delivery with the answer it got.
   */
  deliverPush(options: { project: StandInProject; branch: string; before: string; after: string; user: StandInUser }): Promise<Delivery[]>;
  /** Another system hook event (project_create, user_create, ...), to every system hook. */
  deliverSystemEvent(body: Record<string, unknown>): Promise<Delivery[]>;
  deliveries: Delivery[];
};

/** What the hooks need from the stand-in's state (gitlab-stand-in.ts passes its own closures). */
export type HookRoutesContext = {
  route(method: string, pattern: RegExp, handler: Handler): void;
  origin(): string;
  /** The caller of an API request, or the Reply GitLab sends (401 none or bad token, 403 insufficient_scope). */
  apiCaller(token: string | null, scopes: string[]): { user: StandInUser; record: StandInToken } | Reply;
  isReply(value: unknown): value is Reply;
  findProject(reference: string): StandInProject | null;
  findGroup(reference: string): StandInGroup | null;
  canSee(project: StandInProject, user: StandInUser | null): boolean;
  accessLevel(project: StandInProject, user: StandInUser): number;
  projectJson(project: StandInProject, userId: number | null): Record<string, unknown>;
  projectFullPath(project: StandInProject): string;
  groupAncestry(group: StandInGroup): StandInGroup[];
  projects(): StandInProject[];
  user(id: number): StandInUser | null;
  repositoryPath(project: StandInProject): string;
};

const MAINTAINER = 40;
const NOT_FOUND = (what: string): Reply => ({ status: 404, body: { message: `404 ${what} Not Found` }, schema: 'duo-slice/error.json' });
const FORBIDDEN: Reply = { status: 403, body: { message: '403 Forbidden' }, schema: 'duo-slice/error.json' };

export function installHookRoutes(context: HookRoutesContext): StandInHooks {
  const hooks = new Map<number, StandInHook>();
  const systemHooks: StandInSystemHook[] = [];
  const deliveries: Delivery[] = [];
  let nextHookId = 1;

  const hookJson = (hook: StandInHook) => ({
    id: hook.id,
    url: hook.url,
    created_at: hook.createdAt.toISOString(),
    push_events: hook.pushEvents,
    push_events_branch_filter: null,
    tag_push_events: false,
    merge_requests_events: false,
    repository_update_events: false,
    enable_ssl_verification: hook.enableSslVerification,
    project_id: hook.projectId,
    issues_events: false,
    confidential_issues_events: false,
    note_events: false,
    confidential_note_events: null,
    pipeline_events: false,
    wiki_page_events: false,
    job_events: false,
    deployment_events: false,
    releases_events: false,
    alert_status: 'executable',
    disabled_until: null,
    emoji_events: false,
    custom_webhook_template: null,
  });

  /** admin_project: a Maintainer (or an admin) with a token of the scopes given; the project hidden from others is a 404. */
  const maintainerOf = (params: string[], token: string | null, scopes: string[]) => {
    const caller = context.apiCaller(token, scopes);
    if (context.isReply(caller)) return caller;
    const project = context.findProject(params[0]);
    if (!project || !context.canSee(project, caller.user)) return NOT_FOUND('Project');
    if (context.accessLevel(project, caller.user) < MAINTAINER) return FORBIDDEN;
    return project;
  };

  const hookInput = (body: unknown): { url: string; token?: string; push_events?: unknown; enable_ssl_verification?: unknown } | null => {
    if (!body || typeof body !== 'object') return null;
    return body as { url: string };
  };
  const flag = (value: unknown, fallback: boolean) => (value === undefined ? fallback : value === true || value === 'true');

  context.route('GET', /^\/api\/v4\/projects\/([^/]+)\/hooks$/, ({ params, token }) => {
    const project = maintainerOf(params, token, ['api', 'read_api']);
    if (context.isReply(project)) return project;
    const list = [...hooks.values()].filter((hook) => hook.projectId === project.id).map(hookJson);
    return { status: 200, body: list, schema: 'public_api/v4/project_hooks.json' };
  });

  context.route('POST', /^\/api\/v4\/projects\/([^/]+)\/hooks$/, ({ params, token, body }) => {
    const project = maintainerOf(params, token, ['api']);
    if (context.isReply(project)) return project;
    const input = hookInput(body);
    if (!input?.url || !/^https?:\/\//.test(input.url))
      return { status: 400, body: { message: 'url is missing' }, schema: 'duo-slice/error.json' };
    const hook: StandInHook = {
      id: nextHookId++,
      projectId: project.id,
      url: input.url,
      token: input.token ?? null,
      pushEvents: flag(input.push_events, true),
      enableSslVerification: flag(input.enable_ssl_verification, true),
      createdAt: new Date(),
    };
    hooks.set(hook.id, hook);
    return { status: 201, body: hookJson(hook), schema: 'public_api/v4/project_hook.json' };
  });

  context.route('PUT', /^\/api\/v4\/projects\/([^/]+)\/hooks\/(\d+)$/, ({ params, token, body }) => {
    const project = maintainerOf(params, token, ['api']);
    if (context.isReply(project)) return project;
    const hook = hooks.get(Number(params[1]));
    if (!hook || hook.projectId !== project.id) return NOT_FOUND('Hook');
    const input = hookInput(body) ?? { url: hook.url };
    if (input.url !== undefined) {
      if (!/^https?:\/\//.test(input.url)) return { status: 400, body: { message: 'url is invalid' }, schema: 'duo-slice/error.json' };
      hook.url = input.url;
    }
    // GitLab keeps the token when an update names none.
    if (input.token !== undefined) hook.token = input.token;
    hook.pushEvents = flag(input.push_events, hook.pushEvents);
    hook.enableSslVerification = flag(input.enable_ssl_verification, hook.enableSslVerification);
    return { status: 200, body: hookJson(hook), schema: 'public_api/v4/project_hook.json' };
  });

  context.route('GET', /^\/api\/v4\/groups\/([^/]+)\/projects$/, ({ params, token, url }) => {
    const caller = context.apiCaller(token, ['api', 'read_api']);
    if (context.isReply(caller)) return caller;
    const group = context.findGroup(params[0]);
    if (!group) return NOT_FOUND('Group');
    const subgroups = url.searchParams.get('include_subgroups') === 'true';
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 20) || 20));
    const inGroup = context
      .projects()
      .filter((project) => project.namespace.kind === 'group')
      .filter((project) => {
        const groupId = (project.namespace as { groupId: number }).groupId;
        if (groupId === group.id) return true;
        if (!subgroups) return false;
        const owner = context.findGroup(String(groupId));
        return owner ? context.groupAncestry(owner).some((ancestor) => ancestor.id === group.id) : false;
      })
      .filter((project) => context.canSee(project, caller.user))
      .sort((a, b) =>
        // GitLab's default order is created_at desc; order_by=id with sort=asc|desc is what a paginating client asks.
        url.searchParams.get('order_by') === 'id'
          ? (url.searchParams.get('sort') === 'asc' ? 1 : -1) * (a.id - b.id)
          : b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id,
      );
    const totalPages = Math.max(1, Math.ceil(inGroup.length / perPage));
    const slice = inGroup.slice((page - 1) * perPage, page * perPage);
    return {
      status: 200,
      body: slice.map((project) => context.projectJson(project, caller.user.id)),
      schema: 'duo-slice/projects.json',
      headers: {
        'x-page': String(page),
        'x-per-page': String(perPage),
        'x-total': String(inGroup.length),
        'x-total-pages': String(totalPages),
        'x-next-page': page < totalPages ? String(page + 1) : '',
        'x-prev-page': page > 1 ? String(page - 1) : '',
      },
    };
  });

  const deliver = async (options: {
    kind: 'project' | 'system';
    url: string;
    token: string | null;
    body: Record<string, unknown>;
  }): Promise<Delivery> => {
    const event = options.kind === 'project' ? 'Push Hook' : 'System Hook';
    let status = 0;
    let answer: unknown;
    try {
      const response = await fetch(options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'GitLab/17.11.0',
          'x-gitlab-event': event,
          'x-gitlab-instance': context.origin(),
          'x-gitlab-event-uuid': randomUUID(),
          'x-gitlab-webhook-uuid': randomUUID(),
          ...(options.token ? { 'x-gitlab-token': options.token } : {}),
        },
        body: JSON.stringify(options.body),
        signal: AbortSignal.timeout(10_000),
      });
      status = response.status;
      const text = await response.text();
      try {
        answer = JSON.parse(text);
      } catch {
        answer = text;
      }
    } catch (error) {
      answer = String(error);
    }
    const delivery: Delivery = {
      hook: options.kind,
      url: options.url,
      event: typeof options.body.event_name === 'string' ? options.body.event_name : event,
      status,
      body: answer,
    };
    deliveries.push(delivery);
    return delivery;
  };

  /** GitLab's push event body (doc/user/project/integrations/webhook_events.md, "Push events"). */
  const pushEvent = (options: { project: StandInProject; branch: string; before: string; after: string; user: StandInUser }) => {
    const { project, user } = options;
    const fullPath = context.projectFullPath(project);
    const origin = context.origin();
    const repository = context.repositoryPath(project);
    const deleted = /^0+$/.test(options.after);
    const range = /^0+$/.test(options.before) ? options.after : `${options.before}..${options.after}`;
    const ids = deleted
      ? []
      : execFileSync('git', ['-C', repository, 'rev-list', '--max-count=20', range], { encoding: 'utf8' }).split('\n');
    const commits = ids.filter(Boolean).map((id) => {
      const [message, timestamp, name, email] = execFileSync(
        'git',
        ['-C', repository, 'show', '-s', '--format=%s%x00%cI%x00%an%x00%ae', id],
        {
          encoding: 'utf8',
        },
      )
        .trim()
        .split('\0');
      const changes = { added: [] as string[], modified: [] as string[], removed: [] as string[] };
      for (const line of execFileSync('git', ['-C', repository, 'diff-tree', '--root', '--no-commit-id', '--name-status', '-r', id], {
        encoding: 'utf8',
      }).split('\n')) {
        const [status, file] = line.split('\t');
        if (!file) continue;
        if (status.startsWith('A')) changes.added.push(file);
        else if (status.startsWith('D')) changes.removed.push(file);
        else changes.modified.push(file);
      }
      return { id, message, title: message, timestamp, url: `${origin}/${fullPath}/-/commit/${id}`, author: { name, email }, ...changes };
    });
    const visibilityLevel = { private: 0, internal: 10, public: 20 }[project.visibility];
    const projectJson = context.projectJson(project, null) as { name: string; namespace: { name: string } };
    return {
      object_kind: 'push',
      event_name: 'push',
      before: options.before,
      after: options.after,
      ref: `refs/heads/${options.branch}`,
      ref_protected: options.branch === project.defaultBranch,
      checkout_sha: deleted ? null : options.after,
      message: null,
      user_id: user.id,
      user_name: user.name,
      user_username: user.username,
      user_email: '',
      user_avatar: `${origin}/uploads/-/system/user/avatar/${user.id}/avatar.png`,
      project_id: project.id,
      project: {
        id: project.id,
        name: project.name,
        description: null,
        web_url: `${origin}/${fullPath}`,
        avatar_url: null,
        git_ssh_url: `git@${new URL(origin).host}:${fullPath}.git`,
        git_http_url: `${origin}/${fullPath}.git`,
        namespace: projectJson.namespace.name,
        visibility_level: visibilityLevel,
        path_with_namespace: fullPath,
        default_branch: project.defaultBranch,
        ci_config_path: null,
        homepage: `${origin}/${fullPath}`,
        url: `git@${new URL(origin).host}:${fullPath}.git`,
        ssh_url: `git@${new URL(origin).host}:${fullPath}.git`,
        http_url: `${origin}/${fullPath}.git`,
      },
      commits,
      total_commits_count: commits.length,
      push_options: {},
      repository: {
        name: project.name,
        url: `git@${new URL(origin).host}:${fullPath}.git`,
        description: null,
        homepage: `${origin}/${fullPath}`,
        git_http_url: `${origin}/${fullPath}.git`,
        git_ssh_url: `git@${new URL(origin).host}:${fullPath}.git`,
        visibility_level: visibilityLevel,
      },
    };
  };

  return {
    of: (project) => [...hooks.values()].filter((hook) => hook.projectId === project.id),
    addSystemHook: ({ url, token }) => {
      const hook = { id: nextHookId++, url, token };
      systemHooks.push(hook);
      return hook;
    },
    deliverPush: async (options) => {
      const body = pushEvent(options);
      const sent: Delivery[] = [];
      for (const hook of hooks.values()) {
        if (hook.projectId !== options.project.id || !hook.pushEvents) continue;
        sent.push(await deliver({ kind: 'project', url: hook.url, token: hook.token, body }));
      }
      // A system hook's push event is the project hook's body; GitLab sends it with the System Hook header.
      for (const hook of systemHooks) sent.push(await deliver({ kind: 'system', url: hook.url, token: hook.token, body }));
      return sent;
    },
    deliverSystemEvent: async (body) => {
      const sent: Delivery[] = [];
      for (const hook of systemHooks) sent.push(await deliver({ kind: 'system', url: hook.url, token: hook.token, body }));
      return sent;
    },
    deliveries,
  };
}
