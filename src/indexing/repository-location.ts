import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
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
};

/** A repository that cannot be read: the index fails with this message, which says what to fix. */
export class RepositoryUnavailableError extends AppError {
  /** userMessage never holds a server path (users read it in codeIndex.lastError and chat); internalMessage, for the log, may. */
  constructor(userMessage: string, cause?: unknown, internalMessage?: string) {
    super({ code: 'BAD_USER_INPUT', userMessage, cause, internalMessage });
    this.name = 'RepositoryUnavailableError';
  }
}

function run(args: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    // GIT_TERMINAL_PROMPT=0: a private remote without credentials fails at once instead of waiting for a password.
    execFile(
      'git',
      args,
      { timeout: timeoutMs, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' }, maxBuffer: 16 * 1024 * 1024 },
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

/** A mirror a clone finished writing (a clone still under way has no HEAD yet). */
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
    const mirror = mirrorOf(options);
    try {
      if (isCloned(mirror)) {
        await run(['-C', mirror, 'remote', 'set-url', 'origin', '--', location], timeoutMs);
        await run(
          ['-C', mirror, 'fetch', '--prune', '--quiet', 'origin', '+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'],
          timeoutMs,
        );
      } else {
        mkdirSync(path.dirname(mirror), { recursive: true });
        await run(['clone', '--mirror', '--quiet', '--', location, mirror], timeoutMs);
      }
    } catch (error) {
      const detail = String((error as { stderr?: string }).stderr ?? '')
        .split('\n')
        .pop()
        ?.replace(location, redact(location))
        .slice(0, 200);
      throw new RepositoryUnavailableError(
        `The repository ${redact(location)} could not be fetched: check the URL and that the service can reach it (the worker log has ` +
          `git's message).`,
        error,
        `The repository ${redact(location)} could not be fetched into ${mirror}${detail ? ` (${detail})` : ''}`,
      );
    }
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
    await run(['-C', location, 'rev-parse', '--git-dir'], 30_000);
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
