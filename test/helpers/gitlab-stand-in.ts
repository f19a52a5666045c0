/**
 * A local GitLab for tests: an HTTP server on 127.0.0.1 that answers the REST requests duo-slice
 * sends to GitLab, from users, tokens, groups and projects the test sets up and changes. Every answer
 * is checked against GitLab's JSON schemas for it (test/fixtures/gitlab-schemas) before it goes out:
 * an answer that does not match is recorded in `violations` and sent as a 500 instead, so a test
 * cannot pass on an answer GitLab would not give.
 *
 *   GET /api/v4/personal_access_tokens/self            personal, project and group access tokens
 *   GET /oauth/token/info                              OAuth tokens (Doorkeeper)
 *   GET /api/v4/user
 *   GET /api/v4/projects/:id                           id or URL-encoded full path, with the caller's `permissions`
 *   GET /api/v4/projects/:id/members/all/:user_id      inherited membership included
 *   GET /api/v4/groups/:id/members/all/:user_id
 *   GET /api/v4/groups/:id/projects                    include_subgroups, paginated (gitlab-hooks-stand-in.ts)
 *   GET, POST /api/v4/projects/:id/hooks, PUT /api/v4/projects/:id/hooks/:hook_id   (gitlab-hooks-stand-in.ts)
 *   git over HTTP: /<full path>.git/info/refs, /git-upload-pack   real `git http-backend` (gitlab-git-backend.ts)
 *   GET /api/v4/version, /api/v4/metadata               GitLab's version (STAND_IN_GITLAB_VERSION)
 *   GET /api/v4/projects/:id/merge_requests             state, source_branch and scope filters, as VS Code lists them
 *   GET /api/v4/projects/:id/pipelines                  ref filter
 *   POST /api/graphql                                   executed against GitLab's own type definitions for the fields
 *                                                       VS Code and the language server select, metadata too
 *                                                       (test/fixtures/gitlab-graphql/gitlab-subset.graphql)
 *   POST /oauth/token                                   authorization_code and refresh_token grants
 *
 * `git.push(...)` puts commits in a project's repository and `hooks.deliverPush(...)` sends the push
 * event to its project hooks and the system hooks, as GitLab does after a push.
 *
 * More endpoints: `route(method, pattern, handler)`, whose handler returns `{ status, body, schema }` (the
 * schema it is checked with); `rawRoute(pattern, handler)` for what is not GitLab's JSON API (git's smart
 * HTTP behind `git http-backend`): the handler answers the request itself, nothing is checked.
 *
 * @example
 *   const gitlab = await startGitLabStandIn();
 *   const alice = gitlab.addUser({ username: 'alice' });
 *   const token = gitlab.addToken(alice.id, { scopes: ['api'] });
 *   const group = gitlab.addGroup({ path: 'platform' });
 *   const project = gitlab.addProject({ namespace: group, path: 'api', visibility: 'private' });
 *   gitlab.setGroupMember(group, alice.id, 30);
 *   // ... GITLAB_URL: gitlab.url; later: gitlab.revokeToken(token), gitlab.down('503'), gitlab.up()
 *   await gitlab.close(); // in afterAll
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGitLabGitBackend, type GitLabGitBackend } from './gitlab-git-backend';
import { installHookRoutes, type StandInHooks } from './gitlab-hooks-stand-in';
import { assertMatchesGitLabSchema, GitLabSchemaViolation, type GitLabSchemaName } from './gitlab-schemas';
import { executeStandInGraphQL, type StandInGraphQLData } from './gitlab-stand-in-graphql';

/** The version the stand-in reports, as a GitLab EE of that version does. */
export const STAND_IN_GITLAB_VERSION = '18.6.1-ee';

export const ACCESS = { minimal: 5, guest: 10, planner: 15, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;

export type StandInUser = {
  id: number;
  username: string;
  name: string;
  email: string;
  /** GitLab's states; only `active` users may use their tokens. */
  state: 'active' | 'blocked' | 'deactivated';
  admin: boolean;
  bot: boolean;
  deleted: boolean;
};

export type StandInToken = {
  id: number;
  token: string;
  userId: number;
  name: string;
  kind: 'personal' | 'project' | 'group' | 'oauth';
  scopes: string[];
  revoked: boolean;
  /** A date (YYYY-MM-DD) for access tokens; the token stops at the start of it. */
  expiresAt: string | null;
  /** OAuth: when it stops (ms since the epoch); null never. */
  oauthExpiresAtMs: number | null;
  createdAt: Date;
};

export type StandInGroup = { id: number; path: string; name: string; parentId: number | null; members: Map<number, number> };

export type StandInProject = {
  id: number;
  path: string;
  name: string;
  /** A group, or a user's personal namespace. */
  namespace: { kind: 'group'; groupId: number } | { kind: 'user'; userId: number };
  visibility: 'private' | 'internal' | 'public';
  defaultBranch: string | null;
  members: Map<number, number>;
  createdAt: Date;
};

/** A merge request, with its notes (each its own discussion). */
export type StandInMergeRequest = {
  id: number;
  iid: number;
  projectId: number;
  title: string;
  sourceBranch: string;
  targetBranch: string;
  authorId: number;
  state: 'opened' | 'closed' | 'merged';
  sha: string;
  notes: Array<{ id: number; discussionId: string; authorId: number; body: string; createdAt: Date }>;
  createdAt: Date;
};

export type StandInPipeline = { id: number; projectId: number; sha: string; ref: string; status: string };

/**
 * One request the stand-in received, with the token it carried (tests check whose credential went where),
 * and the headers, query and body it came with (tests check what a pass-through added or changed).
 */
export type StandInRequest = {
  method: string;
  path: string;
  token: string | null;
  status: number;
  query: string;
  headers: http.IncomingHttpHeaders;
  body: string;
};

export type Reply = { status: number; body: unknown; schema: GitLabSchemaName; headers?: Record<string, string> };
/** `body`: the request's JSON (or form) body parsed, null when there was none; `rawBody`: its text as sent. */
export type Handler = (request: {
  method: string;
  url: URL;
  params: string[];
  token: string | null;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  rawBody: string;
}) => Reply;

export type GitLabStandIn = {
  url: string;
  requests: StandInRequest[];
  /** Answers that did not match GitLab's schemas (sent as 500 instead). */
  violations: GitLabSchemaViolation[];
  addUser(options: { username: string; name?: string; admin?: boolean; bot?: boolean }): StandInUser;
  addToken(
    userId: number,
    options?: {
      scopes?: string[];
      kind?: StandInToken['kind'];
      expiresAt?: string | null;
      oauthExpiresInSeconds?: number;
    },
  ): string;
  addGroup(options: { path: string; name?: string; parent?: StandInGroup }): StandInGroup;
  addProject(options: {
    namespace: StandInGroup | StandInUser;
    path: string;
    name?: string;
    visibility?: StandInProject['visibility'];
    defaultBranch?: string | null;
  }): StandInProject;
  addMergeRequest(
    project: StandInProject,
    options: { title: string; sourceBranch: string; targetBranch?: string; author: StandInUser; state?: StandInMergeRequest['state'] },
  ): StandInMergeRequest;
  addNote(mergeRequest: StandInMergeRequest, options: { author: StandInUser; body: string }): void;
  addPipeline(project: StandInProject, options: { ref: string; status?: string }): StandInPipeline;
  /** An authorization code GitLab's sign-in page would have given the user, for POST /oauth/token. */
  addOAuthCode(userId: number, options?: { scopes?: string[] }): string;
  setProjectMember(project: StandInProject, userId: number, accessLevel: number | null): void;
  setGroupMember(group: StandInGroup, userId: number, accessLevel: number | null): void;
  revokeToken(token: string): void;
  setUserState(userId: number, state: StandInUser['state']): void;
  deleteUser(userId: number): void;
  projectFullPath(project: StandInProject): string;
  groupFullPath(group: StandInGroup): string;
  /** From now on: answer every request with a 503, refuse connections, or hold requests without answering. */
  down(how: '503' | 'refuse' | 'hang'): void;
  up(): void;
  /** Changes the next answer's body before it is checked and sent (to prove a wrong answer is caught). */
  tamperNext(change: (body: unknown) => unknown): void;
  /** Turns an instance feature flag (GraphQL `metadata.featureFlags`) on or off; all are off at first. */
  setFeatureFlag(name: string, enabled: boolean): void;
  route(method: string, pattern: RegExp, handler: Handler): void;
  /** A path answered by `handler` itself (any method), before the JSON routes; the stand-in's `down()` still applies. */
  rawRoute(pattern: RegExp, handler: (request: http.IncomingMessage, response: http.ServerResponse) => void): void;
  /** The requests that carried this token. */
  requestsWith(token: string): StandInRequest[];
  /** The projects' git repositories, served by `git http-backend` behind GitLab's basic auth. */
  git: GitLabGitBackend;
  /** Project hooks (set through the API), system hooks, and push deliveries to them. */
  hooks: StandInHooks;
  close(): Promise<void>;
};

const UNAUTHORIZED: Reply = { status: 401, body: { message: '401 Unauthorized' }, schema: 'duo-slice/error.json' };

export async function startGitLabStandIn(): Promise<GitLabStandIn> {
  const users = new Map<number, StandInUser>();
  const tokens = new Map<string, StandInToken>();
  const groups = new Map<number, StandInGroup>();
  const projects = new Map<number, StandInProject>();
  const mergeRequests = new Map<number, StandInMergeRequest>();
  const featureFlags = new Set<string>();
  const pipelines = new Map<number, StandInPipeline>();
  const oauthCodes = new Map<string, { userId: number; scopes: string[] }>();
  const refreshTokens = new Map<string, string>();
  const routes: Array<{ method: string; pattern: RegExp; handler: Handler }> = [];
  const rawRoutes: Array<{ pattern: RegExp; handler: (request: http.IncomingMessage, response: http.ServerResponse) => void }> = [];
  const requests: StandInRequest[] = [];
  const violations: GitLabSchemaViolation[] = [];
  // Namespaces share one id sequence in GitLab (groups and users' personal namespaces).
  let nextId = 100;
  let state: 'up' | '503' | 'refuse' | 'hang' = 'up';
  let tamper: ((body: unknown) => unknown) | null = null;
  let origin = '';

  const groupFullPath = (group: StandInGroup): string => {
    const parent = group.parentId === null ? null : groups.get(group.parentId);
    return parent ? `${groupFullPath(parent)}/${group.path}` : group.path;
  };
  const groupAncestry = (group: StandInGroup): StandInGroup[] => {
    const parent = group.parentId === null ? null : groups.get(group.parentId);
    return parent ? [group, ...groupAncestry(parent)] : [group];
  };
  const namespaceOf = (project: StandInProject) => {
    if (project.namespace.kind === 'group') {
      const group = groups.get(project.namespace.groupId)!;
      return {
        id: group.id,
        name: group.name,
        path: group.path,
        kind: 'group' as const,
        full_path: groupFullPath(group),
        parent_id: group.parentId,
      };
    }
    const owner = users.get(project.namespace.userId)!;
    // A user's personal namespace: an id of its own in GitLab; here the user's id plus a fixed offset.
    return {
      id: 1_000_000 + owner.id,
      name: owner.name,
      path: owner.username,
      kind: 'user' as const,
      full_path: owner.username,
      parent_id: null,
    };
  };
  const projectFullPath = (project: StandInProject) => `${namespaceOf(project).full_path}/${project.path}`;

  /** The caller's membership: project_access (direct) and group_access (the project's group or an ancestor, highest). */
  const accessOf = (project: StandInProject, userId: number) => {
    const direct = project.members.get(userId) ?? null;
    let inherited: number | null = null;
    if (project.namespace.kind === 'group') {
      for (const group of groupAncestry(groups.get(project.namespace.groupId)!)) {
        const level = group.members.get(userId);
        if (level !== undefined) inherited = Math.max(inherited ?? 0, level);
      }
    } else if (project.namespace.userId === userId) {
      inherited = ACCESS.owner;
    }
    return { direct, inherited };
  };
  const groupMemberLevel = (group: StandInGroup, userId: number): number | null => {
    let level: number | null = null;
    for (const ancestor of groupAncestry(group)) {
      const found = ancestor.members.get(userId);
      if (found !== undefined) level = Math.max(level ?? 0, found);
    }
    return level;
  };

  /** The token's holder if GitLab would take the token now: not revoked, not expired, an active user. */
  const holder = (token: string | null, kinds: StandInToken['kind'][]): { record: StandInToken; user: StandInUser } | null => {
    if (!token) return null;
    const record = tokens.get(token);
    if (!record || !kinds.includes(record.kind) || record.revoked) return null;
    if (record.expiresAt && new Date().toISOString().slice(0, 10) >= record.expiresAt) return null;
    if (record.oauthExpiresAtMs !== null && Date.now() >= record.oauthExpiresAtMs) return null;
    const user = users.get(record.userId);
    if (!user || user.deleted || user.state !== 'active') return null;
    return { record, user };
  };
  const API_KINDS: StandInToken['kind'][] = ['personal', 'project', 'group', 'oauth'];
  const insufficientScope = (scopes: string[]): Reply => ({
    status: 403,
    body: {
      error: 'insufficient_scope',
      error_description: 'The request requires higher privileges than provided by the access token.',
      scope: scopes.join(' '),
    },
    schema: 'duo-slice/error.json',
  });
  /** The caller of an API request: null anonymous, 'refused' a token GitLab does not take, or one without a scope the request needs. */
  const apiCaller = (token: string | null, accepted: string[]): { user: StandInUser; record: StandInToken } | null | Reply => {
    if (!token) return null;
    const found = holder(token, API_KINDS);
    if (!found) return UNAUTHORIZED;
    if (!found.record.scopes.some((scope) => accepted.includes(scope))) return insufficientScope(accepted);
    return found;
  };
  const isReply = (value: unknown): value is Reply => Boolean(value && typeof value === 'object' && 'schema' in value);

  const userJson = (user: StandInUser) => ({
    id: user.id,
    username: user.username,
    name: user.name,
    state: user.state === 'deactivated' ? 'blocked' : user.state,
    locked: false,
    avatar_url: `${origin}/uploads/-/system/user/avatar/${user.id}/avatar.png`,
    web_url: `${origin}/${user.username}`,
    created_at: '2026-01-05T10:00:00.000Z',
    bio: '',
    location: '',
    public_email: null,
    skype: '',
    linkedin: '',
    twitter: '',
    discord: '',
    website_url: '',
    organization: '',
    job_title: '',
    pronouns: null,
    bot: user.bot,
    work_information: null,
    local_time: null,
    last_sign_in_at: '2026-11-28T09:00:00.000Z',
    confirmed_at: '2026-01-05T10:00:00.000Z',
    last_activity_on: '2026-11-28',
    email: user.email,
    theme_id: 1,
    color_scheme_id: 1,
    projects_limit: 100000,
    current_sign_in_at: '2026-11-28T09:00:00.000Z',
    identities: [],
    can_create_group: true,
    can_create_project: true,
    two_factor_enabled: false,
    external: false,
    private_profile: false,
    commit_email: user.email,
    ...(user.admin ? { is_admin: true, namespace_id: 1_000_000 + user.id } : {}),
  });

  const projectJson = (project: StandInProject, userId: number | null) => {
    const fullPath = projectFullPath(project);
    const namespace = namespaceOf(project);
    const access = userId === null ? null : accessOf(project, userId);
    const level = (value: number | null) => (value === null ? null : { access_level: value, notification_level: 3 });
    return {
      id: project.id,
      description: null,
      name: project.name,
      name_with_namespace: `${namespace.name} / ${project.name}`,
      path: project.path,
      path_with_namespace: fullPath,
      created_at: project.createdAt.toISOString(),
      default_branch: project.defaultBranch,
      tag_list: [],
      topics: [],
      ssh_url_to_repo: `git@${new URL(origin).host}:${fullPath}.git`,
      http_url_to_repo: `${origin}/${fullPath}.git`,
      web_url: `${origin}/${fullPath}`,
      readme_url: null,
      avatar_url: null,
      forks_count: 0,
      star_count: 0,
      last_activity_at: project.createdAt.toISOString(),
      namespace,
      visibility: project.visibility,
      empty_repo: project.defaultBranch === null,
      archived: false,
      ...(access ? { permissions: { project_access: level(access.direct), group_access: level(access.inherited) } } : {}),
    };
  };

  const memberJson = (user: StandInUser, accessLevel: number) => ({
    id: user.id,
    username: user.username,
    name: user.name,
    state: user.state === 'deactivated' ? 'blocked' : user.state,
    avatar_url: `${origin}/uploads/-/system/user/avatar/${user.id}/avatar.png`,
    web_url: `${origin}/${user.username}`,
    access_level: accessLevel,
    created_at: '2026-01-05T10:00:00.000Z',
    expires_at: null,
  });

  const findProject = (reference: string): StandInProject | null => {
    const decoded = decodeURIComponent(reference);
    if (/^\d+$/.test(decoded)) return projects.get(Number(decoded)) ?? null;
    return [...projects.values()].find((project) => projectFullPath(project) === decoded) ?? null;
  };
  const findGroup = (reference: string): StandInGroup | null => {
    const decoded = decodeURIComponent(reference);
    if (/^\d+$/.test(decoded)) return groups.get(Number(decoded)) ?? null;
    return [...groups.values()].find((group) => groupFullPath(group) === decoded) ?? null;
  };
  /** GitLab's read_project: public to all, internal to any signed-in user, private to members (Guest and up) and admins. */
  const canSee = (project: StandInProject, user: StandInUser | null): boolean => {
    if (project.visibility === 'public') return true;
    if (!user) return false;
    if (project.visibility === 'internal' || user.admin) return true;
    const { direct, inherited } = accessOf(project, user.id);
    return Math.max(direct ?? 0, inherited ?? 0) >= ACCESS.guest;
  };
  const PROJECT_NOT_FOUND: Reply = { status: 404, body: { message: '404 Project Not Found' }, schema: 'duo-slice/error.json' };
  const READ_SCOPES = ['api', 'read_api'];

  const route = (method: string, pattern: RegExp, handler: Handler) => routes.push({ method, pattern, handler });

  route('GET', /^\/api\/v4\/personal_access_tokens\/self$/, ({ token }) => {
    if (token && tokens.get(token)?.kind === 'oauth')
      return { status: 404, body: { message: '404 Not Found' }, schema: 'duo-slice/error.json' };
    const found = holder(token, ['personal', 'project', 'group']);
    if (!found) return UNAUTHORIZED;
    const { record } = found;
    return {
      status: 200,
      schema: 'duo-slice/personal-access-token-self.json',
      body: {
        id: record.id,
        name: record.name,
        revoked: record.revoked,
        created_at: record.createdAt.toISOString(),
        description: null,
        scopes: record.scopes,
        user_id: record.userId,
        last_used_at: new Date().toISOString(),
        active: true,
        expires_at: record.expiresAt,
      },
    };
  });

  route('GET', /^\/oauth\/token\/info$/, ({ token }) => {
    const found = holder(token, ['oauth']);
    if (!found)
      return {
        status: 401,
        body: { error: 'invalid_token', error_description: 'The access token is invalid' },
        schema: 'duo-slice/error.json',
      };
    const { record } = found;
    return {
      status: 200,
      schema: 'duo-slice/oauth-token-info.json',
      body: {
        resource_owner_id: record.userId,
        scope: record.scopes,
        scopes: record.scopes,
        expires_in: record.oauthExpiresAtMs === null ? null : Math.max(0, Math.floor((record.oauthExpiresAtMs - Date.now()) / 1000)),
        application: { uid: 'stand-in-application' },
        created_at: Math.floor(record.createdAt.getTime() / 1000),
      },
    };
  });

  route('GET', /^\/api\/v4\/user$/, ({ token }) => {
    if (!token) return UNAUTHORIZED;
    const caller = apiCaller(token, ['api', 'read_api', 'read_user']);
    if (isReply(caller)) return caller;
    return { status: 200, body: userJson(caller!.user), schema: 'duo-slice/user.json' };
  });

  route('GET', /^\/api\/v4\/projects\/([^/]+)$/, ({ params, token }) => {
    const caller = apiCaller(token, READ_SCOPES);
    if (isReply(caller)) return caller;
    const project = findProject(params[0]);
    if (!project || !canSee(project, caller?.user ?? null)) return PROJECT_NOT_FOUND;
    return { status: 200, body: projectJson(project, caller?.user.id ?? null), schema: 'duo-slice/project.json' };
  });

  route('GET', /^\/api\/v4\/projects\/([^/]+)\/members\/all\/(\d+)$/, ({ params, token }) => {
    const caller = apiCaller(token, READ_SCOPES);
    if (isReply(caller)) return caller;
    const project = findProject(params[0]);
    if (!project || !canSee(project, caller?.user ?? null)) return PROJECT_NOT_FOUND;
    const user = users.get(Number(params[1]));
    const { direct, inherited } = user ? accessOf(project, user.id) : { direct: null, inherited: null };
    if (!user || user.deleted || (direct === null && inherited === null))
      return { status: 404, body: { message: '404 Member Not Found' }, schema: 'duo-slice/error.json' };
    return { status: 200, body: memberJson(user, Math.max(direct ?? 0, inherited ?? 0)), schema: 'duo-slice/member.json' };
  });

  route('GET', /^\/api\/v4\/groups\/([^/]+)\/members\/all\/(\d+)$/, ({ params, token }) => {
    const caller = apiCaller(token, READ_SCOPES);
    if (isReply(caller)) return caller;
    const group = findGroup(params[0]);
    if (!group || !caller) return { status: 404, body: { message: '404 Group Not Found' }, schema: 'duo-slice/error.json' };
    const user = users.get(Number(params[1]));
    const level = user && !user.deleted ? groupMemberLevel(group, user.id) : null;
    if (!user || level === null) return { status: 404, body: { message: '404 Member Not Found' }, schema: 'duo-slice/error.json' };
    return { status: 200, body: memberJson(user, level), schema: 'duo-slice/member.json' };
  });

  /** GitLab's download_code: public projects to anyone; else a read_repository or api token of a Reporter or more (or an admin). */
  const git = createGitLabGitBackend(({ fullPath, token }) => {
    const project = findProject(fullPath);
    const found = token ? holder(token, API_KINDS) : null;
    if (token && (!found || !found.record.scopes.some((scope) => ['read_repository', 'api'].includes(scope)))) return 'unauthorized';
    if (project?.visibility === 'public') return 'ok';
    if (!found) return 'unauthorized';
    if (!project || !canSee(project, found.user)) return 'not_found';
    const { direct, inherited } = accessOf(project, found.user.id);
    return found.user.admin || project.visibility === 'internal' || Math.max(direct ?? 0, inherited ?? 0) >= ACCESS.reporter
      ? 'ok'
      : 'not_found';
  });
  const hooks = installHookRoutes({
    route,
    origin: () => origin,
    apiCaller: (token, scopes) => {
      const caller = apiCaller(token, scopes);
      return caller === null ? UNAUTHORIZED : caller;
    },
    isReply,
    findProject,
    findGroup,
    canSee,
    accessLevel: (project, user) => {
      const { direct, inherited } = accessOf(project, user.id);
      return user.admin ? ACCESS.owner : Math.max(direct ?? 0, inherited ?? 0);
    },
    projectJson,
    projectFullPath,
    groupAncestry,
    projects: () => [...projects.values()],
    user: (id) => users.get(id) ?? null,
    repositoryPath: (project) => git.repositoryPath(projectFullPath(project)),
  });

  // What VS Code's GitLab Workflow asks for besides Duo: the version, merge requests, pipelines, GraphQL, OAuth.
  const metadataJson = () => ({
    version: STAND_IN_GITLAB_VERSION,
    revision: '6d4cf7b1a3e',
    kas: {
      enabled: true,
      externalUrl: `${origin.replace(/^http/, 'ws')}/-/kubernetes-agent/`,
      version: STAND_IN_GITLAB_VERSION.replace(/-ee$/, ''),
    },
    enterprise: true,
  });
  route('GET', /^\/api\/v4\/(version|metadata)$/, ({ token }) => {
    const caller = apiCaller(token, ['api', 'read_api', 'read_user', 'ai_features']);
    if (isReply(caller)) return caller;
    if (!caller) return UNAUTHORIZED;
    return { status: 200, body: metadataJson(), schema: 'public_api/v4/metadata.json' };
  });

  const userBrief = (user: StandInUser) => ({
    name: user.name,
    username: user.username,
    id: user.id,
    state: user.state === 'deactivated' ? 'blocked' : user.state,
    avatar_url: `${origin}/uploads/-/system/user/avatar/${user.id}/avatar.png`,
    web_url: `${origin}/${user.username}`,
  });
  const mergeRequestJson = (mergeRequest: StandInMergeRequest) => {
    const project = projects.get(mergeRequest.projectId)!;
    const author = userBrief(users.get(mergeRequest.authorId)!);
    return {
      id: mergeRequest.id,
      iid: mergeRequest.iid,
      project_id: project.id,
      title: mergeRequest.title,
      description: null,
      state: mergeRequest.state,
      created_at: mergeRequest.createdAt.toISOString(),
      updated_at: mergeRequest.createdAt.toISOString(),
      target_branch: mergeRequest.targetBranch,
      source_branch: mergeRequest.sourceBranch,
      upvotes: 0,
      downvotes: 0,
      author,
      assignee: author,
      source_project_id: project.id,
      target_project_id: project.id,
      labels: [],
      work_in_progress: false,
      milestone: null,
      merge_when_pipeline_succeeds: false,
      merge_status: 'can_be_merged',
      sha: mergeRequest.sha,
      merge_commit_sha: null,
      user_notes_count: mergeRequest.notes.length,
      should_remove_source_branch: null,
      force_remove_source_branch: null,
      web_url: `${origin}/${projectFullPath(project)}/-/merge_requests/${mergeRequest.iid}`,
      approvals_before_merge: null,
      squash: false,
    };
  };
  route('GET', /^\/api\/v4\/projects\/([^/]+)\/merge_requests$/, ({ params, token, url }) => {
    const caller = apiCaller(token, READ_SCOPES);
    if (isReply(caller)) return caller;
    const project = findProject(params[0]);
    if (!project || !canSee(project, caller?.user ?? null)) return PROJECT_NOT_FOUND;
    const state = url.searchParams.get('state') ?? 'all';
    const sourceBranch = url.searchParams.get('source_branch');
    const scope = url.searchParams.get('scope') ?? 'all';
    if (scope !== 'all' && !caller) return UNAUTHORIZED;
    const found = [...mergeRequests.values()].filter(
      (mergeRequest) =>
        mergeRequest.projectId === project.id &&
        (state === 'all' || mergeRequest.state === state) &&
        (sourceBranch === null || mergeRequest.sourceBranch === sourceBranch) &&
        (scope === 'all' || mergeRequest.authorId === caller!.user.id),
    );
    return { status: 200, body: found.reverse().map(mergeRequestJson), schema: 'public_api/v4/merge_requests.json' };
  });
  route('GET', /^\/api\/v4\/projects\/([^/]+)\/pipelines$/, ({ params, token, url }) => {
    const caller = apiCaller(token, READ_SCOPES);
    if (isReply(caller)) return caller;
    const project = findProject(params[0]);
    if (!project || !canSee(project, caller?.user ?? null)) return PROJECT_NOT_FOUND;
    const ref = url.searchParams.get('ref');
    const found = [...pipelines.values()].filter((pipeline) => pipeline.projectId === project.id && (ref === null || pipeline.ref === ref));
    return {
      status: 200,
      body: found.reverse().map(({ id, sha, ref: pipelineRef, status }) => ({ id, sha, ref: pipelineRef, status })),
      schema: 'public_api/v4/pipelines.json',
    };
  });

  const graphqlData: StandInGraphQLData = {
    origin: () => origin,
    findProject: (fullPath) => [...projects.values()].find((project) => projectFullPath(project) === fullPath) ?? null,
    findProjectById: (id) => projects.get(id) ?? null,
    canSee,
    projectFullPath,
    groupOf: (project) => (project.namespace.kind === 'group' ? groups.get(project.namespace.groupId)! : null),
    groupFullPath,
    user: (id) => users.get(id) ?? null,
    mergeRequests: () => [...mergeRequests.values()],
    addNote: (mergeRequest, author, body) => addNote(mergeRequest, { author, body }),
    metadata: metadataJson,
    featureFlagEnabled: (name) => featureFlags.has(name),
  };
  route('POST', /^\/api\/graphql$/, ({ token, rawBody }) => {
    const caller = apiCaller(token, READ_SCOPES);
    if (isReply(caller)) return caller;
    let request: { query?: unknown; variables?: unknown; operationName?: unknown };
    try {
      request = JSON.parse(rawBody) as typeof request;
    } catch {
      return { status: 400, body: { errors: [{ message: 'Invalid JSON' }] }, schema: 'duo-slice/graphql-response.json' };
    }
    const canWrite = Boolean(caller && caller.record.scopes.includes('api'));
    const answer = executeStandInGraphQL(graphqlData, { ...request, viewer: caller?.user ?? null, canWrite });
    return { status: 200, body: answer, schema: 'duo-slice/graphql-response.json' };
  });

  route('POST', /^\/oauth\/token$/, ({ headers, rawBody }) => {
    const form = String(headers['content-type'] ?? '').includes('json')
      ? new URLSearchParams(JSON.parse(rawBody) as Record<string, string>)
      : new URLSearchParams(rawBody);
    const invalidGrant: Reply = {
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'The provided authorization grant is invalid, expired, revoked or was issued to another client.',
      },
      schema: 'duo-slice/error.json',
    };
    let grant: { userId: number; scopes: string[] } | undefined;
    if (form.get('grant_type') === 'authorization_code') {
      grant = oauthCodes.get(form.get('code') ?? '');
      oauthCodes.delete(form.get('code') ?? '');
    } else if (form.get('grant_type') === 'refresh_token') {
      const previous = tokens.get(refreshTokens.get(form.get('refresh_token') ?? '') ?? '');
      if (previous) grant = { userId: previous.userId, scopes: previous.scopes };
    }
    if (!grant) return invalidGrant;
    const accessToken = createToken(grant.userId, { kind: 'oauth', scopes: grant.scopes, oauthExpiresInSeconds: 7200 });
    const refreshToken = randomBytes(32).toString('hex');
    refreshTokens.set(refreshToken, accessToken);
    return {
      status: 200,
      schema: 'duo-slice/oauth-token.json',
      body: {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: 7200,
        refresh_token: refreshToken,
        scope: grant.scopes.join(' '),
        created_at: Math.floor(Date.now() / 1000),
      },
    };
  });

  function addNote(mergeRequest: StandInMergeRequest, options: { author: StandInUser; body: string }) {
    const id = nextId++;
    const note = {
      id,
      discussionId: randomBytes(20).toString('hex'),
      authorId: options.author.id,
      body: options.body,
      createdAt: new Date(),
    };
    mergeRequest.notes.push(note);
    return note;
  }

  function createToken(
    userId: number,
    options: {
      scopes?: string[];
      kind?: StandInToken['kind'];
      expiresAt?: string | null;
      oauthExpiresInSeconds?: number;
    } = {},
  ): string {
    const kind = options.kind ?? 'personal';
    const token =
      (kind === 'oauth' ? '' : 'glpat-') + randomBytes(kind === 'oauth' ? 32 : 15).toString(kind === 'oauth' ? 'hex' : 'base64url');
    tokens.set(token, {
      id: nextId++,
      token,
      userId,
      name: `${kind} token`,
      kind,
      scopes: options.scopes ?? ['api'],
      revoked: false,
      expiresAt: options.expiresAt ?? null,
      oauthExpiresAtMs: options.oauthExpiresInSeconds === undefined ? null : Date.now() + options.oauthExpiresInSeconds * 1000,
      createdAt: new Date(),
    });
    return token;
  }

  const tokenOf = (request: http.IncomingMessage): string | null => {
    const privateToken = request.headers['private-token'];
    if (typeof privateToken === 'string' && privateToken) return privateToken;
    const match = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '');
    return match ? match[1].trim() : null;
  };

  const parseBody = (request: http.IncomingMessage, text: string): unknown => {
    if (!text) return null;
    if ((request.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded'))
      return Object.fromEntries(new URLSearchParams(text));
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return null;
    }
  };
  const record = (request: http.IncomingMessage, url: URL, status: number, requestBody: string) =>
    requests.push({
      method: request.method ?? 'GET',
      path: url.pathname,
      token: tokenOf(request),
      status,
      query: url.search,
      headers: request.headers,
      body: requestBody,
    });

  const server = http.createServer((request, response) => {
    if (state === 'hang') return;
    if (state === 'refuse') {
      request.socket.destroy();
      return;
    }
    if (state === 'up') {
      const url = new URL(request.url ?? '/', origin);
      const raw = rawRoutes.find((candidate) => candidate.pattern.test(url.pathname));
      if (raw) {
        response.on('finish', () => record(request, url, response.statusCode, ''));
        raw.handler(request, response);
        return;
      }
      // git's smart HTTP reads the request's body itself.
      if (git.handle(request, response)) return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => respond(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  const respond = (request: http.IncomingMessage, response: http.ServerResponse, requestBody: string) => {
    const url = new URL(request.url ?? '/', origin);
    const token = tokenOf(request);
    let reply: Reply;
    if (state === '503') {
      reply = { status: 503, body: { message: '503 Service Unavailable' }, schema: 'duo-slice/error.json' };
    } else {
      const match = routes
        .filter((candidate) => candidate.method === request.method)
        .map((candidate) => ({ candidate, found: candidate.pattern.exec(url.pathname) }))
        .find(({ found }) => found !== null);
      reply = match
        ? match.candidate.handler({
            method: request.method ?? 'GET',
            url,
            params: match.found!.slice(1),
            token,
            headers: request.headers,
            body: request.method === 'GET' || request.method === 'HEAD' ? null : parseBody(request, requestBody),
            rawBody: requestBody,
          })
        : { status: 404, body: { message: '404 Not Found' }, schema: 'duo-slice/error.json' };
    }
    let answer = reply.body;
    if (tamper) {
      answer = tamper(answer);
      tamper = null;
    }
    try {
      assertMatchesGitLabSchema(reply.schema, answer);
    } catch (error) {
      if (!(error instanceof GitLabSchemaViolation)) throw error;
      violations.push(error);
      record(request, url, 500, requestBody);
      response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `stand-in: ${error.message}` }));
      return;
    }
    record(request, url, reply.status, requestBody);
    response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(JSON.stringify(answer));
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: origin,
    requests,
    violations,
    addUser: (options) => {
      const id = nextId++;
      const user: StandInUser = {
        id,
        username: options.username,
        name: options.name ?? options.username,
        email: `${options.username}@example.com`,
        state: 'active',
        admin: options.admin ?? false,
        bot: options.bot ?? false,
        deleted: false,
      };
      users.set(id, user);
      return user;
    },
    addToken: (userId, options = {}) => createToken(userId, options),
    addGroup: (options) => {
      const group: StandInGroup = {
        id: nextId++,
        path: options.path,
        name: options.name ?? options.path,
        parentId: options.parent?.id ?? null,
        members: new Map(),
      };
      groups.set(group.id, group);
      return group;
    },
    addProject: (options) => {
      const namespace =
        'members' in options.namespace
          ? { kind: 'group' as const, groupId: options.namespace.id }
          : { kind: 'user' as const, userId: options.namespace.id };
      const project: StandInProject = {
        id: nextId++,
        path: options.path,
        name: options.name ?? options.path,
        namespace,
        visibility: options.visibility ?? 'private',
        defaultBranch: options.defaultBranch === undefined ? 'main' : options.defaultBranch,
        members: new Map(),
        createdAt: new Date('2026-02-01T12:00:00.000Z'),
      };
      projects.set(project.id, project);
      return project;
    },
    addMergeRequest: (project, options) => {
      const iid = [...mergeRequests.values()].filter((each) => each.projectId === project.id).length + 1;
      const mergeRequest: StandInMergeRequest = {
        id: nextId++,
        iid,
        projectId: project.id,
        title: options.title,
        sourceBranch: options.sourceBranch,
        targetBranch: options.targetBranch ?? project.defaultBranch ?? 'main',
        authorId: options.author.id,
        state: options.state ?? 'opened',
        sha: randomBytes(20).toString('hex'),
        notes: [],
        createdAt: new Date('2026-11-20T09:00:00.000Z'),
      };
      mergeRequests.set(mergeRequest.id, mergeRequest);
      return mergeRequest;
    },
    addNote: (mergeRequest, options) => void addNote(mergeRequest, options),
    addPipeline: (project, options) => {
      const pipeline: StandInPipeline = {
        id: nextId++,
        projectId: project.id,
        sha: randomBytes(20).toString('hex'),
        ref: options.ref,
        status: options.status ?? 'success',
      };
      pipelines.set(pipeline.id, pipeline);
      return pipeline;
    },
    addOAuthCode: (userId, options = {}) => {
      const code = randomBytes(16).toString('hex');
      oauthCodes.set(code, { userId, scopes: options.scopes ?? ['api'] });
      return code;
    },
    setProjectMember: (project, userId, accessLevel) => {
      if (accessLevel === null) project.members.delete(userId);
      else project.members.set(userId, accessLevel);
    },
    setGroupMember: (group, userId, accessLevel) => {
      if (accessLevel === null) group.members.delete(userId);
      else group.members.set(userId, accessLevel);
    },
    revokeToken: (token) => {
      const record = tokens.get(token);
      if (!record) throw new Error('no such token');
      record.revoked = true;
    },
    setUserState: (userId, newState) => {
      users.get(userId)!.state = newState;
    },
    deleteUser: (userId) => {
      users.get(userId)!.deleted = true;
    },
    projectFullPath,
    groupFullPath,
    down: (how) => {
      state = how;
    },
    up: () => {
      state = 'up';
    },
    tamperNext: (change) => {
      tamper = change;
    },
    setFeatureFlag: (name, enabled) => void (enabled ? featureFlags.add(name) : featureFlags.delete(name)),
    route,
    rawRoute: (pattern, handler) => rawRoutes.push({ pattern, handler }),
    requestsWith: (token) => requests.filter((request) => request.token === token),
    git,
    hooks,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      git.close();
    },
  };
}
