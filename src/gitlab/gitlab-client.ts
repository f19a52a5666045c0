import { z } from 'zod';
import { AppError, unauthenticated } from '../errors';
import type { Logger } from '../logger';
import {
  gitLabMemberSchema,
  gitLabOAuthTokenInfoSchema,
  gitLabProjectSchema,
  gitLabTokenSelfSchema,
  gitLabUserSchema,
  type GitLabMember,
  type GitLabOAuthTokenInfo,
  type GitLabProject,
  type GitLabTokenSelf,
  type GitLabUser,
} from './gitlab-types';

/**
 * Whose token a request to GitLab carries. A caller's own token goes with that caller's requests
 * only; the service's (GITLAB_SERVICE_TOKEN) with the service's own reads (repositories, hooks,
 * DUO_ACCESS group membership). `anonymous` sends none (public projects, as GitLab shows them to
 * anyone).
 */
export type GitLabCredential = { kind: 'user'; token: string } | { kind: 'service' } | { kind: 'anonymous' };

export type GitLabClientOptions = {
  /** GITLAB_URL, without a trailing slash. */
  url: string;
  /** Sent only for `{ kind: 'service' }` requests. */
  serviceToken: string | undefined;
  /** Each request's limit (headers and body). */
  timeoutMs: number;
  logger: Logger;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
};

export type GitLabRequest = {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** From the instance root, starting with a slash: `/api/v4/user`, `/oauth/token/info`. */
  path: string;
  credential: GitLabCredential;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
};

/** GitLab's answer: its status and parsed JSON body (null when there was none or it was not JSON). */
export type GitLabResponse = { status: number; body: unknown; headers: Headers };

/** GitLab did not answer, answered slowly, or failed (5xx): a 503 / SERVICE_UNAVAILABLE naming it, on every transport. */
export class GitLabUnavailableError extends AppError {
  constructor(url: string, internalMessage: string, cause?: unknown) {
    super({ code: 'UNAVAILABLE', userMessage: `GitLab at ${url} is unavailable`, internalMessage, cause });
    this.name = 'GitLabUnavailableError';
  }
}

/** The service needs GITLAB_SERVICE_TOKEN for what it was asked to do, and has none. */
export class MissingServiceTokenError extends AppError {
  constructor(purpose: string) {
    super({ code: 'INTERNAL', userMessage: `GITLAB_SERVICE_TOKEN is not set, and ${purpose} needs it` });
    this.name = 'MissingServiceTokenError';
  }
}

/** A project reference as GitLab's REST paths take it: a numeric id, or the URL-encoded full path. */
export function projectPathSegment(reference: number | string): string {
  return encodeURIComponent(String(reference));
}

/**
 * GitLab's REST API as the service reads it: one base URL from configuration (a request never
 * chooses where we connect; redirects are not followed), a timeout per request, and errors in the
 * app's vocabulary. Tokens are sent in headers and appear in no error and no log line.
 *
 * New endpoints: a method that calls `request` and parses the body with a schema in gitlab-types.ts.
 */
export class GitLabClient {
  readonly url: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: GitLabClientOptions) {
    this.url = options.url;
    this.fetch = options.fetch ?? fetch;
  }

  get hasServiceToken(): boolean {
    return Boolean(this.options.serviceToken);
  }

  /** One request. 5xx, a refused connection or the timeout throw GitLabUnavailableError; other statuses are returned. */
  async request(request: GitLabRequest): Promise<GitLabResponse> {
    const url = new URL(this.url + request.path);
    for (const [key, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'duo-slice' };
    const token = this.tokenFor(request.credential);
    if (token) headers.authorization = `Bearer ${token}`;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const method = request.method ?? 'GET';
    const what = `${method} ${request.path}`;
    let response: Response;
    let text: string;
    try {
      response = await this.fetch(url, {
        method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs} ms` : (error as Error).message;
      this.options.logger.warn({ event: 'gitlab_unavailable', gitlabUrl: this.url, request: what, reason }, 'GitLab did not answer');
      throw new GitLabUnavailableError(this.url, `${what}: ${reason}`, error);
    }
    if (response.status >= 500) {
      this.options.logger.warn(
        { event: 'gitlab_unavailable', gitlabUrl: this.url, request: what, status: response.status },
        'GitLab failed',
      );
      throw new GitLabUnavailableError(this.url, `${what}: HTTP ${response.status}`);
    }
    let body: unknown = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
    }
    return { status: response.status, body, headers: response.headers };
  }

  /**
   * GET /api/v4/personal_access_tokens/self: the token's own facts (personal, project and group access tokens); null when
   * GitLab refuses it.
   */
  async personalAccessTokenSelf(token: string): Promise<GitLabTokenSelf | null> {
    const response = await this.request({ path: '/api/v4/personal_access_tokens/self', credential: { kind: 'user', token } });
    if (isRefusal(response.status)) return null;
    return this.parse(response, gitLabTokenSelfSchema, 'GET /api/v4/personal_access_tokens/self');
  }

  /** GET /oauth/token/info (Doorkeeper): an OAuth token's owner, scopes and remaining life; null when GitLab refuses it. */
  async oauthTokenInfo(token: string): Promise<GitLabOAuthTokenInfo | null> {
    const response = await this.request({ path: '/oauth/token/info', credential: { kind: 'user', token } });
    if (isRefusal(response.status)) return null;
    return this.parse(response, gitLabOAuthTokenInfoSchema, 'GET /oauth/token/info');
  }

  /**
   * GET /api/v4/user: the token's user; `refused` when the token is no longer good (revoked, expired,
   * a blocked or deleted user), `insufficient_scope` when it is good but may not read the user.
   */
  async currentUser(token: string): Promise<GitLabUser | 'refused' | 'insufficient_scope'> {
    const response = await this.request({ path: '/api/v4/user', credential: { kind: 'user', token } });
    if (response.status === 403 && (response.body as { error?: unknown } | null)?.error === 'insufficient_scope')
      return 'insufficient_scope';
    if (isRefusal(response.status)) return 'refused';
    return this.parse(response, gitLabUserSchema, 'GET /api/v4/user');
  }

  /**
   * GET /api/v4/projects/:id as the credential's holder sees it (with their `permissions`); null when they may not see it or
   * it is missing.
   */
  async project(reference: number | string, credential: GitLabCredential): Promise<GitLabProject | null> {
    const response = await this.request({ path: `/api/v4/projects/${projectPathSegment(reference)}`, credential });
    if (response.status === 404 || response.status === 403) return null;
    // The caller's token stopped holding since it was checked (within AUTH_CACHE_MS): as GitLab, a 401.
    if (response.status === 401) throw unauthenticated();
    return this.parse(response, gitLabProjectSchema, 'GET /api/v4/projects/:id');
  }

  /**
   * GET /api/v4/groups/:id/members/all/:user_id (inherited membership included); null when the user is no member (or the
   * group is not visible).
   */
  async groupMember(group: number | string, userId: number, credential: GitLabCredential): Promise<GitLabMember | null> {
    const response = await this.request({
      path: `/api/v4/groups/${encodeURIComponent(String(group))}/members/all/${userId}`,
      credential,
    });
    if (response.status === 404 || response.status === 403) return null;
    if (response.status === 401) throw this.unexpected('GET /api/v4/groups/:id/members/all/:user_id', response, 'the token was refused');
    return this.parse(response, gitLabMemberSchema, 'GET /api/v4/groups/:id/members/all/:user_id');
  }

  /** GET /api/v4/projects/:id/members/all/:user_id (inherited membership included); null when the user is no member. */
  async projectMember(project: number | string, userId: number, credential: GitLabCredential): Promise<GitLabMember | null> {
    const response = await this.request({ path: `/api/v4/projects/${projectPathSegment(project)}/members/all/${userId}`, credential });
    if (response.status === 404 || response.status === 403) return null;
    if (response.status === 401) throw unauthenticated();
    return this.parse(response, gitLabMemberSchema, 'GET /api/v4/projects/:id/members/all/:user_id');
  }

  private tokenFor(credential: GitLabCredential): string | null {
    if (credential.kind === 'user') return credential.token;
    if (credential.kind === 'anonymous') return null;
    if (!this.options.serviceToken) throw new MissingServiceTokenError('this request to GitLab');
    return this.options.serviceToken;
  }

  private parse<T>(response: GitLabResponse, schema: z.ZodType<T>, what: string): T {
    if (response.status < 200 || response.status >= 300) throw this.unexpected(what, response, `HTTP ${response.status}`);
    const parsed = schema.safeParse(response.body);
    if (!parsed.success) {
      const problem = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ');
      throw this.unexpected(what, response, `an answer of another shape (${problem})`);
    }
    return parsed.data;
  }

  private unexpected(what: string, response: GitLabResponse, detail: string): AppError {
    this.options.logger.error(
      { event: 'gitlab_unexpected_answer', gitlabUrl: this.url, request: what, status: response.status, detail },
      'GitLab answered unexpectedly',
    );
    return new AppError({
      code: 'INTERNAL',
      userMessage: `GitLab at ${this.url} answered ${what} unexpectedly`,
      internalMessage: `GitLab answered ${what} with ${detail}`,
    });
  }
}

/**
 * GitLab's answers for a token it does not take (401) or a user it will not serve (403 for a blocked one, 404 for a token
 * it cannot find).
 */
function isRefusal(status: number): boolean {
  return status === 401 || status === 403 || status === 404;
}
