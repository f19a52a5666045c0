import type { TokenScope } from './tokens';

/** The authenticated caller of a request: a user and the token they used. */
export type Viewer = {
  user: { id: number; username: string; name: string; email: string; admin: boolean };
  token: { id: number; scopes: readonly TokenScope[] };
};

/** GitLab: `api` allows everything; `ai_features` allows the AI endpoints; `read_api` only reads. */
export function hasScope(viewer: Viewer, ...accepted: TokenScope[]): boolean {
  return viewer.token.scopes.some((scope) => accepted.includes(scope));
}
