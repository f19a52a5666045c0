/**
 * What this instance says about itself to clients: the GitLab version it reports and the web
 * URLs of the things it holds. One place, so REST (/api/v4/version, /user) and GraphQL
 * (metadata, currentUser.webUrl, Project.webUrl) never disagree.
 */

/**
 * The GitLab version we report (/api/v4/version and `metadata { version }`). Clients choose
 * what they send by it, so it moves up only when every request the clients start sending at the
 * new version works: see test/conformance/README.md, "The reported version".
 */
export const GITLAB_VERSION = '17.11.0';

/** Longest list `metadata.featureFlags(names:)` takes, and the longest name in it. */
export const FEATURE_FLAG_LIMITS = { names: 100, nameLength: 255 } as const;

const encodePath = (fullPath: string) => fullPath.split('/').map(encodeURIComponent).join('/');

export const userWebUrl = (externalUrl: string, username: string) => `${externalUrl}/${encodeURIComponent(username)}`;

/** A picture of the user's initials we serve ourselves: no third-party avatar service sees who uses the instance. */
export const userAvatarUrl = (externalUrl: string, userId: number) => `${externalUrl}/uploads/-/system/user/avatar/${userId}/avatar.svg`;

/**
 * Base of the web URLs of users, groups, projects and files: GitLab's (GITLAB_URL) in connected mode, where
 * they live, else this instance's own (EXTERNAL_URL or the URL it listens on).
 */
export const webBaseUrl = (gitlab: { url: string } | null, externalUrl: string) => gitlab?.url ?? externalUrl;

export const namespaceWebUrl = (externalUrl: string, fullPath: string) => `${externalUrl}/${encodePath(fullPath)}`;

export const projectWebUrl = (externalUrl: string, fullPath: string) => `${externalUrl}/${encodePath(fullPath)}`;

/**
 * A project's page: GitLab's own `web_url` for a project mirrored from GitLab (it knows its relative URL root and
 * any rename), else `projectWebUrl` under `webBaseUrl`.
 */
export const projectPageUrl = (baseUrl: string, project: { fullPath: string; webUrl?: string | null }) =>
  project.webUrl ?? projectWebUrl(baseUrl, project.fullPath);

/** Whether an instance feature flag is on: only the names the configuration turns on are. */
export const isFeatureFlagEnabled = (enabledFlags: readonly string[], name: string) => enabledFlags.includes(name);
