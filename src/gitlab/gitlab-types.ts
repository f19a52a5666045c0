import { z } from 'zod';

// The parts of GitLab's REST answers the service reads (GitLab's API documentation; the test stand-in's answers are
// checked against GitLab's own JSON schemas). Other fields pass unread.

/** GET /api/v4/personal_access_tokens/self (personal, project and group access tokens). */
export const gitLabTokenSelfSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  revoked: z.boolean(),
  scopes: z.array(z.string()),
  user_id: z.number().int(),
  active: z.boolean(),
  /** A date (`2026-12-31`): the token stops working at the start of that day, UTC. */
  expires_at: z.string().nullable(),
});
export type GitLabTokenSelf = z.infer<typeof gitLabTokenSelfSchema>;

/** GET /oauth/token/info (Doorkeeper): `scope` is a list (GitLab also sends it as `scopes`). */
export const gitLabOAuthTokenInfoSchema = z.object({
  resource_owner_id: z.number().int().nullable(),
  scope: z.union([z.array(z.string()), z.string().transform((value) => value.split(' ').filter(Boolean))]),
  /** Seconds the token has left; null when it does not expire. */
  expires_in: z.number().nullable(),
});
export type GitLabOAuthTokenInfo = z.infer<typeof gitLabOAuthTokenInfoSchema>;

/** GET /api/v4/user. */
export const gitLabUserSchema = z.object({
  id: z.number().int(),
  username: z.string().min(1),
  name: z.string(),
  /** active, blocked, deactivated, ... */
  state: z.string(),
  web_url: z.string(),
  avatar_url: z.string().nullable().optional(),
  /** Sent to the user themself with read_user or api; not always. */
  email: z.string().optional(),
  /** Only for administrators. */
  is_admin: z.boolean().optional(),
  bot: z.boolean().optional(),
});
export type GitLabUser = z.infer<typeof gitLabUserSchema>;

const accessSchema = z.object({ access_level: z.number().int() }).nullable().optional();

/** GET /api/v4/projects/:id, as the caller sees it. */
export const gitLabProjectSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  path: z.string(),
  path_with_namespace: z.string(),
  visibility: z.enum(['private', 'internal', 'public']),
  /** Null for an empty repository. */
  default_branch: z.string().nullable(),
  http_url_to_repo: z.string(),
  web_url: z.string(),
  namespace: z.object({
    id: z.number().int(),
    name: z.string(),
    path: z.string(),
    kind: z.enum(['group', 'user']),
    full_path: z.string(),
  }),
  /** The caller's own membership (GitLab leaves it out for anonymous requests). */
  permissions: z.object({ project_access: accessSchema, group_access: accessSchema }).optional(),
  /** EE's per-project switch; CE does not send it. */
  duo_features_enabled: z.boolean().optional(),
});
export type GitLabProject = z.infer<typeof gitLabProjectSchema>;

/** GET /api/v4/{projects,groups}/:id/members/all/:user_id. */
export const gitLabMemberSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  state: z.string(),
  access_level: z.number().int(),
});
export type GitLabMember = z.infer<typeof gitLabMemberSchema>;

/** The caller's access level on a project from its `permissions`: the higher of their project and group membership; 0 none. */
export function permissionsAccessLevel(project: GitLabProject): number {
  const permissions = project.permissions;
  return Math.max(0, permissions?.project_access?.access_level ?? 0, permissions?.group_access?.access_level ?? 0);
}
