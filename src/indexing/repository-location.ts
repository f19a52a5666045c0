import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { open, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../errors';
import type { GitOptions } from './git-reader';

/** Where a project's code is read from. */
export type RepositoryLocationOptions = {
  projectId: number;
  /** The project's repository: a local path (bare or not) or an http(s) URL. */
  repositoryUrl: string | null;
  /** Clones of remote repositories are cached under `<dataDir>/repositories`. */
  dataDir: string;
  /** For clone and fetch. Default 10 minutes. */
  timeoutMs?: number;
  /** Connected mode (GITLAB_URL): http(s) repositories are read from that GitLab only, with the service token. Default none. */
  gitlab?: GitLabRepositoryAccess | null;
};

/**
 * How repositories on the connected GitLab are read: over HTTPS from under GITLAB_URL only (a project's
 * http_url_to_repo), with GITLAB_SERVICE_TOKEN as HTTP basic auth's password, never with a user's token.
 */
export type GitLabRepositoryAccess = Readonly<{
  /** GITLAB_URL, without a trailing slash. */
  url: string;
  /** GITLAB_SERVICE_TOKEN; without it no repository on GitLab can be read. */
  serviceToken: string | undefined;
}>;

/** A repository that cannot be read: the index fails with this message, which says what to fix. */
export class RepositoryUnavailableError extends AppError {
  /** userMessage never holds a server path (users read it in codeIndex.lastError and chat); internalMessage, for the log, may. */
  constructor(userMessage: string, cause?: unknown, internalMessage?: string) {
    super({ code: 'BAD_USER_INPUT', userMessage, cause, internalMessage });
    this.name = 'RepositoryUnavailableError';
  }
}

function runGit(args: string[], timeoutMs: number, extraEnv: NodeJS.ProcessEnv = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    // GIT_TERMINAL_PROMPT=0: a private remote without credentials fails at once instead of waiting for a password.
    execFile(
      'git',
      args,
      { timeout: timeoutMs, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', ...extraEnv }, maxBuffer: 16 * 1024 * 1024 },
      (error, _stdout, stderr) => {
        if (error) {
          const failure: Error & { stderr: string } = Object.assign(error, { stderr: String(stderr).trim() });
          reject(failure);
        } else resolve();
      },
    );
  });
}

function isRemote(location: string): boolean {
  return /^https?:\/\//i.test(location);
}

/** The remote without credentials, for messages. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'the repository URL';
  }
}

/**
 * The git directory a ref can be looked up in now, without a fetch: a local repository, or a
 * remote's mirror once the first run cloned it; null when there is none yet (or no repository).
 */
export function gitDirWithoutFetch(options: Omit<RepositoryLocationOptions, 'timeoutMs'>): string | null {
  const location = options.repositoryUrl?.trim();
  if (!location) return null;
  if (!isRemote(location)) return existsSync(location) ? location : null;
  const mirror = mirrorOf(options);
  return isCloned(mirror) ? mirror : null;
}

function mirrorOf(options: Pick<RepositoryLocationOptions, 'dataDir' | 'projectId'>): string {
  return path.join(options.dataDir, 'repositories', `${options.projectId}.git`);
}

/**
 * A mirror whose clone finished: a clone is made in a directory of its own and renamed to the
 * mirror's name once git has exited successfully (`git clone` writes HEAD before it fetches anything,
 * so a HEAD alone would take a clone under way for a finished one).
 */
const isCloned = (mirror: string) => existsSync(path.join(mirror, 'HEAD'));

/**
 * A git directory to read the project's code from: the local path itself, or a mirror clone of an
 * http(s) remote under DATA_DIR, fetched (with pruning, so deleted branches disappear) on each call.
 */
export async function openRepository(options: RepositoryLocationOptions): Promise<GitOptions> {
  const location = options.repositoryUrl?.trim();
  if (!location)
    throw new RepositoryUnavailableError(
      'The project has no repository configured: set one with `npm run admin -- update-project --repository <path or URL>`.',
    );
  const timeoutMs = options.timeoutMs ?? 10 * 60_000;
  if (isRemote(location)) {
    const gitlab = options.gitlab ?? null;
    const env = gitlab ? gitLabCredentialEnv(gitlab, location) : {};
    const mirror = mirrorOf(options);
    mkdirSync(path.dirname(mirror), { recursive: true });
    await withMirrorLock(mirror, timeoutMs, () => updateMirror({ location, mirror, timeoutMs, env, gitlab }));
    return { repository: mirror };
  }
  if (!path.isAbsolute(location))
    throw new RepositoryUnavailableError(
      "The project's repository path must be absolute.",
      undefined,
      `repository path "${location}" is not absolute`,
    );
  if (!existsSync(location) || !statSync(location).isDirectory()) {
    throw new RepositoryUnavailableError(
      "The project's repository path does not exist or is not a directory on the indexing worker's machine (the worker log names it).",
      undefined,
      `repository path "${location}" does not exist or is not a directory`,
    );
  }
  try {
    await runGit(['-C', location, 'rev-parse', '--git-dir'], 30_000);
  } catch (error) {
    throw new RepositoryUnavailableError(
      "The project's repository path is not a git repository, or git cannot read it: check its owner and permissions (the worker log " +
        'names it).',
      error,
      `"${location}" is not a git repository (or git cannot read it)`,
    );
  }
  return { repository: location };
}

/** Times a clone or fetch is tried before the run fails (and the job retries later). */
const GIT_ATTEMPTS = 3;

/**
 * Clones the remote into the mirror (in a directory of its own, renamed into place once complete),
 * or fetches it with pruning. A failure that says the URL is wrong (no such repository, host or
 * credentials) is the project's: refused at once, BAD_USER_INPUT, not retried. Any other (a
 * timeout, a dropped connection, a server error) is tried GIT_ATTEMPTS times, then fails the run
 * as INTERNAL, which the queue retries.
 */
async function updateMirror(options: {
  location: string;
  mirror: string;
  timeoutMs: number;
  env: NodeJS.ProcessEnv;
  gitlab: GitLabRepositoryAccess | null;
}): Promise<void> {
  const { location, mirror, timeoutMs, env } = options;
  const run = (args: string[], timeout: number) => runGit(args, timeout, env);
  for (let attempt = 1; ; attempt += 1) {
    try {
      if (isCloned(mirror)) {
        await run(['-C', mirror, 'remote', 'set-url', 'origin', '--', location], timeoutMs);
        await run(
          ['-C', mirror, 'fetch', '--prune', '--quiet', 'origin', '+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'],
          timeoutMs,
        );
      } else {
        removeUnfinishedClones(mirror);
        const unfinished = `${mirror}.clone-${randomBytes(4).toString('hex')}`;
        try {
          await run(['clone', '--mirror', '--quiet', '--', location, unfinished], timeoutMs);
          await rename(unfinished, mirror);
        } finally {
          rmSync(unfinished, { recursive: true, force: true });
        }
      }
      return;
    } catch (error) {
      const stderr = String((error as { stderr?: string }).stderr ?? '');
      const refused = isRefusal(stderr);
      if (!refused && attempt < GIT_ATTEMPTS) {
        await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
        continue;
      }
      const detail = stderr.split('\n').pop()?.replace(location, redact(location)).slice(0, 200);
      const internal = `The repository ${redact(location)} could not be fetched into ${mirror}${detail ? ` (${detail})` : ''}`;
      const gitlabRefusal = refused && options.gitlab ? gitLabRefusal(options.gitlab, location, stderr) : null;
      if (gitlabRefusal) throw new RepositoryUnavailableError(gitlabRefusal, error, internal);
      if (refused)
        throw new RepositoryUnavailableError(
          `The repository ${redact(location)} could not be fetched: check the URL and that the service may read it (the worker log has ` +
            `git's message).`,
          error,
          internal,
        );
      throw new AppError({
        code: 'INTERNAL',
        userMessage: `The repository ${redact(location)} could not be fetched (git failed ${GIT_ATTEMPTS} times); it will be retried.`,
        internalMessage: internal,
        cause: error,
      });
    }
  }
}

/**
 * Checks that a remote is on the connected GitLab (no project row, push event or request can make the
 * service connect elsewhere) and returns the environment that gives git the service token: an
 * `Authorization: Basic` header for GITLAB_URL only, through git's GIT_CONFIG_* variables, so the token is in no
 * command line (`ps`), no clone's .git/config, no URL git prints, no error and no log line. Redirects are
 * not followed (the header must not go anywhere else), and no credential helper or prompt of the machine
 * is asked.
 */
export function gitLabCredentialEnv(gitlab: GitLabRepositoryAccess, location: string): NodeJS.ProcessEnv {
  const base = new URL(`${gitlab.url}/`);
  const remote = URL.canParse(location) ? new URL(location) : null;
  const onGitLab =
    remote !== null &&
    remote.origin === base.origin &&
    remote.pathname.startsWith(base.pathname) &&
    !remote.username &&
    !remote.password &&
    !remote.search &&
    !remote.hash;
  if (!onGitLab)
    throw new RepositoryUnavailableError(
      `The project's repository ${redact(location)} is not on GitLab at ${gitlab.url}: with GITLAB_URL set, repositories are read ` +
        'from that GitLab only.',
    );
  if (!gitlab.serviceToken)
    throw new RepositoryUnavailableError(
      `GITLAB_SERVICE_TOKEN is not set: repositories on GitLab at ${gitlab.url} are read with it (scope read_repository).`,
    );
  const basic = Buffer.from(`duo-slice:${gitlab.serviceToken}`).toString('base64');
  return {
    GIT_CONFIG_COUNT: '3',
    GIT_CONFIG_KEY_0: `http.${base.href}.extraHeader`,
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    GIT_CONFIG_KEY_1: 'http.followRedirects',
    GIT_CONFIG_VALUE_1: 'false',
    // An empty helper resets the list: no helper of the machine is asked for (or told) credentials for GitLab.
    GIT_CONFIG_KEY_2: 'credential.helper',
    GIT_CONFIG_VALUE_2: '',
    GIT_ASKPASS: '',
    GIT_TRACE_CURL: '',
    GIT_CURL_VERBOSE: '',
  };
}

/**
 * GitLab's refusal of the service token (401/403) or its "not found" (404: missing, or hidden from the token's user), in
 * words an operator can act on; null for other refusals (an unknown host), which keep the general message.
 */
function gitLabRefusal(gitlab: GitLabRepositoryAccess, location: string, stderr: string): string | null {
  if (/returned error: 40[13]|authentication failed|could not read (username|password)|terminal prompts disabled/i.test(stderr))
    return (
      `GitLab at ${gitlab.url} refused GITLAB_SERVICE_TOKEN for the repository ${redact(location)}: the token must be valid and ` +
      'have the read_repository (or api) scope.'
    );
  if (/returned error: 404|not found/i.test(stderr))
    return (
      `GitLab at ${gitlab.url} has no repository ${redact(location)} that GITLAB_SERVICE_TOKEN may read: the token's user needs ` +
      'Reporter access (or more) to the project.'
    );
  return null;
}

/** git's words for a remote that is not there or will not let the service in: no retry can help. */
function isRefusal(stderr: string): boolean {
  return REFUSALS.some((refusal) => refusal.test(stderr));
}

const REFUSALS = [
  /not found/i,
  /returned error: (401|403|404)/i,
  /does not appear to be a git repository|not valid: is this a git repository/i,
  /authentication failed|could not read (username|password)|terminal prompts disabled/i,
  /could not resolve host|unable to find remote helper/i,
];

/** Clones a dead run left half-written (only ever called under the mirror's lock). */
function removeUnfinishedClones(mirror: string): void {
  const prefix = `${path.basename(mirror)}.clone-`;
  for (const name of readdirSync(path.dirname(mirror))) {
    if (name.startsWith(prefix)) rmSync(path.join(path.dirname(mirror), name), { recursive: true, force: true });
  }
}

/** How often a lock's holder marks it alive; a lock not marked for a git timeout and this long is a dead holder's. */
const LOCK_REFRESH_MS = 15_000;

/**
 * One clone or fetch at a time per mirror, across this process's runs and every other process
 * that shares DATA_DIR (two workers, INDEX_CONCURRENCY > 1): two `clone --mirror` into one directory,
 * or two `fetch --prune` racing for its refs' locks, fail each other. A lock file created
 * exclusively (O_EXCL) beside the mirror; its holder touches it while it works, and a file whose
 * holder died (its process gone on this host, or not touched for a git timeout) is taken over.
 */
async function withMirrorLock<T>(mirror: string, timeoutMs: number, work: () => Promise<T>): Promise<T> {
  const lock = `${mirror}.lock`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const handle = await open(lock, 'wx');
      await handle.writeFile(JSON.stringify({ pid: process.pid, host: os.hostname(), at: Date.now() }));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (await isStaleLock(lock, timeoutMs)) {
        await rm(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new AppError({
          code: 'INTERNAL',
          userMessage: "Another index run is still fetching the project's repository; this one will be retried.",
          internalMessage: `waited ${timeoutMs} ms for ${lock}`,
        });
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 100));
    }
  }
  const refresh = setInterval(() => {
    const now = new Date();
    utimes(lock, now, now).catch(() => undefined);
  }, LOCK_REFRESH_MS);
  refresh.unref();
  try {
    return await work();
  } finally {
    clearInterval(refresh);
    await rm(lock, { force: true });
  }
}

async function isStaleLock(lock: string, timeoutMs: number): Promise<boolean> {
  try {
    const [content, info] = await Promise.all([readFile(lock, 'utf8'), stat(lock)]);
    if (Date.now() - info.mtimeMs > timeoutMs + 4 * LOCK_REFRESH_MS) return true;
    const holder = JSON.parse(content) as { pid?: number; host?: string };
    if (holder.host !== os.hostname() || typeof holder.pid !== 'number') return false;
    try {
      process.kill(holder.pid, 0);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ESRCH';
    }
  } catch {
    // Gone meanwhile (try again at once), or written but not yet filled in (its holder is alive).
    return false;
  }
}
