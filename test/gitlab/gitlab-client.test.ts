import pino from 'pino';
import { isAppError } from '../../src/errors';
import { GitLabClient, GitLabUnavailableError, MissingServiceTokenError } from '../../src/gitlab/gitlab-client';
import { permissionsAccessLevel } from '../../src/gitlab/gitlab-types';
import { assertMatchesGitLabSchema, GitLabSchemaViolation } from '../helpers/gitlab-schemas';
import { ACCESS, startGitLabStandIn, type GitLabStandIn } from '../helpers/gitlab-stand-in';

describe('GitLab client against the GitLab stand-in', () => {
  let gitlab: GitLabStandIn;
  const logs: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => logs.push(line) });
  const client = (options: { timeoutMs?: number; serviceToken?: string } = {}) =>
    new GitLabClient({ url: gitlab.url, serviceToken: options.serviceToken, timeoutMs: options.timeoutMs ?? 5_000, logger });

  beforeAll(async () => {
    gitlab = await startGitLabStandIn();
  });
  afterAll(() => gitlab.close());
  afterEach(() => {
    gitlab.up();
    expect(gitlab.violations).toEqual([]);
  });

  it("reads a personal access token's facts and its user, and refuses it once revoked", async () => {
    const alice = gitlab.addUser({ username: 'alice' });
    const token = gitlab.addToken(alice.id, { scopes: ['api', 'read_repository'] });
    const self = await client().personalAccessTokenSelf(token);
    expect(self).toMatchObject({ user_id: alice.id, scopes: ['api', 'read_repository'], revoked: false, active: true, expires_at: null });
    expect(await client().currentUser(token)).toMatchObject({ id: alice.id, username: 'alice', state: 'active' });
    gitlab.revokeToken(token);
    expect(await client().personalAccessTokenSelf(token)).toBeNull();
    expect(await client().currentUser(token)).toBe('refused');
    // A project asked about with it: GitLab's 401, not "no such project".
    await expect(client().project(1, { kind: 'user', token })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it("reads an OAuth token's owner and scopes from /oauth/token/info; a personal token there is refused", async () => {
    const bob = gitlab.addUser({ username: 'bob' });
    const oauth = gitlab.addToken(bob.id, { kind: 'oauth', scopes: ['api'], oauthExpiresInSeconds: 7200 });
    expect(await client().personalAccessTokenSelf(oauth)).toBeNull();
    const info = await client().oauthTokenInfo(oauth);
    expect(info).toMatchObject({ resource_owner_id: bob.id, scope: ['api'] });
    expect(info!.expires_in).toBeGreaterThan(7000);
    expect(await client().oauthTokenInfo(gitlab.addToken(bob.id))).toBeNull();
  });

  it('answers insufficient_scope for a token that may not read the user, and refused for a blocked user', async () => {
    const carol = gitlab.addUser({ username: 'carol' });
    expect(await client().currentUser(gitlab.addToken(carol.id, { scopes: ['ai_features'] }))).toBe('insufficient_scope');
    const token = gitlab.addToken(carol.id, { scopes: ['read_user'] });
    expect(await client().currentUser(token)).toMatchObject({ username: 'carol' });
    gitlab.setUserState(carol.id, 'blocked');
    expect(await client().currentUser(token)).toBe('refused');
    expect(await client().personalAccessTokenSelf(token)).toBeNull();
  });

  it("reads a project by id or full path with the caller's permissions, inherited group membership included", async () => {
    const dave = gitlab.addUser({ username: 'dave' });
    const token = gitlab.addToken(dave.id);
    const parent = gitlab.addGroup({ path: 'platform' });
    const child = gitlab.addGroup({ path: 'backend', parent });
    const project = gitlab.addProject({ namespace: child, path: 'api', visibility: 'private', defaultBranch: 'trunk' });
    const credential = { kind: 'user' as const, token };
    // Not a member: the private project is hidden, as a missing one.
    expect(await client().project(project.id, credential)).toBeNull();
    expect(await client().project('platform/backend/nothing', credential)).toBeNull();
    gitlab.setGroupMember(parent, dave.id, ACCESS.reporter);
    const byId = await client().project(project.id, credential);
    expect(byId).toMatchObject({
      id: project.id,
      path_with_namespace: 'platform/backend/api',
      visibility: 'private',
      default_branch: 'trunk',
      http_url_to_repo: `${gitlab.url}/platform/backend/api.git`,
      web_url: `${gitlab.url}/platform/backend/api`,
      namespace: { id: child.id, kind: 'group', full_path: 'platform/backend' },
      permissions: { project_access: null, group_access: { access_level: ACCESS.reporter } },
    });
    expect(permissionsAccessLevel(byId!)).toBe(ACCESS.reporter);
    gitlab.setProjectMember(project, dave.id, ACCESS.maintainer);
    const byPath = await client().project('platform/backend/api', credential);
    expect(permissionsAccessLevel(byPath!)).toBe(ACCESS.maintainer);
    expect((await client().projectMember(project.id, dave.id, credential))?.access_level).toBe(ACCESS.maintainer);
    // Anonymous callers see public projects only, without permissions.
    const open = gitlab.addProject({ namespace: parent, path: 'docs', visibility: 'public' });
    const anonymous = await client().project(open.id, { kind: 'anonymous' });
    expect(anonymous?.permissions).toBeUndefined();
    expect(await client().project(project.id, { kind: 'anonymous' })).toBeNull();
  });

  it('reads group membership with the service token, inherited from a parent group', async () => {
    const admin = gitlab.addUser({ username: 'service-bot', admin: true });
    const serviceToken = gitlab.addToken(admin.id, { scopes: ['read_api', 'read_repository'] });
    const erin = gitlab.addUser({ username: 'erin' });
    const parent = gitlab.addGroup({ path: 'duo-users' });
    const child = gitlab.addGroup({ path: 'team', parent });
    expect(await client({ serviceToken }).groupMember('duo-users/team', erin.id, { kind: 'service' })).toBeNull();
    gitlab.setGroupMember(parent, erin.id, ACCESS.guest);
    expect(await client({ serviceToken }).groupMember(child.id, erin.id, { kind: 'service' })).toMatchObject({
      access_level: ACCESS.guest,
    });
    expect(gitlab.requestsWith(serviceToken).length).toBe(2);
  });

  it('refuses a service request when GITLAB_SERVICE_TOKEN is not set, sending nothing', async () => {
    const before = gitlab.requests.length;
    await expect(client().groupMember('duo-users', 1, { kind: 'service' })).rejects.toBeInstanceOf(MissingServiceTokenError);
    expect(gitlab.requests.length).toBe(before);
  });

  it.each(['503', 'refuse'] as const)('makes GitLab %s a GitLabUnavailableError naming GitLab, with no token in the logs', async (how) => {
    const frank = gitlab.addUser({ username: `frank-${how}` });
    const token = gitlab.addToken(frank.id);
    gitlab.down(how);
    logs.length = 0;
    const error = await client()
      .currentUser(token)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GitLabUnavailableError);
    expect(isAppError(error) && error.httpStatus).toBe(503);
    expect((error as GitLabUnavailableError).userMessage).toBe(`GitLab at ${gitlab.url} is unavailable`);
    expect(logs.join('\n')).toContain('gitlab_unavailable');
    expect(logs.join('\n')).not.toContain(token);
  });

  it('gives up on a GitLab that does not answer within the timeout', async () => {
    const grace = gitlab.addUser({ username: 'grace' });
    gitlab.down('hang');
    const started = Date.now();
    await expect(client({ timeoutMs: 300 }).currentUser(gitlab.addToken(grace.id))).rejects.toThrow(/no answer within 300 ms/);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("checks every stand-in answer against GitLab's schemas: a malformed one is caught, not sent", async () => {
    const heidi = gitlab.addUser({ username: 'heidi' });
    const token = gitlab.addToken(heidi.id);
    gitlab.tamperNext((body) => ({ ...(body as object), username: undefined, state: 7 }));
    await expect(client().currentUser(token)).rejects.toBeInstanceOf(GitLabUnavailableError);
    expect(gitlab.violations).toHaveLength(1);
    expect(gitlab.violations[0].message).toMatch(/duo-slice\/user\.json/);
    expect(gitlab.violations[0].problems.join(' ')).toMatch(/username/);
    gitlab.violations.length = 0;
  });

  it('answers paths that are not the JSON API (git over HTTP) with a raw route, which down() still takes down', async () => {
    gitlab.rawRoute(/^\/group\/repo\.git\/info\/refs$/, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' }).end('001e# service=git-upload-pack\n');
    });
    const url = `${gitlab.url}/group/repo.git/info/refs?service=git-upload-pack`;
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('git-upload-pack');
    expect(gitlab.requests.at(-1)).toMatchObject({ path: '/group/repo.git/info/refs', status: 200 });
    gitlab.down('503');
    expect((await fetch(url)).status).toBe(503);
  });

  it.each([
    ['duo-slice/user.json', { id: 1, username: 'x', name: 'x', state: 'active', avatar_url: 'a', web_url: 'w' }, /created_at/],
    ['duo-slice/project.json', { id: 1, name: 'p', path: 'p', path_with_namespace: 'g/p', description: null }, /visibility/],
    [
      'duo-slice/member.json',
      { id: 1, username: 'x', name: 'x', state: 'active', web_url: null, avatar_url: null, expires_at: null },
      /access_level/,
    ],
    ['public_api/v4/projects.json', [{ id: 1, surplus: true }], /additional properties/],
  ] as const)("rejects an answer that breaks GitLab's schema %s", (schema, body, problem) => {
    expect(() => assertMatchesGitLabSchema(schema, body)).toThrow(GitLabSchemaViolation);
    expect(() => assertMatchesGitLabSchema(schema, body)).toThrow(problem);
  });

  it("reads GitLab's `date` type as a timestamp string", () => {
    const user = {
      id: 1,
      username: 'x',
      email: 'x@example.com',
      name: 'x',
      state: 'active',
      avatar_url: 'a',
      web_url: 'w',
      bio: null,
      location: null,
      skype: '',
      linkedin: '',
      twitter: '',
      website_url: '',
      organization: null,
      last_sign_in_at: '2026-11-28T09:00:00.000Z',
      confirmed_at: null,
      color_scheme_id: 1,
      projects_limit: 1,
      current_sign_in_at: '2026-11-28T09:00:00.000Z',
      identities: [],
      can_create_group: true,
      can_create_project: true,
      two_factor_enabled: false,
      external: false,
    };
    expect(() => assertMatchesGitLabSchema('duo-slice/user.json', { ...user, created_at: '2026-01-05T10:00:00.000Z' })).not.toThrow();
    expect(() => assertMatchesGitLabSchema('duo-slice/user.json', { ...user, created_at: 'yesterday' })).toThrow(/created_at/);
  });
});
