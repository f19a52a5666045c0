/**
 * The GitLab stand-in's repositories: real bare repositories served over git's smart HTTP protocol by
 * git's own CGI program (`git http-backend`), behind GitLab's HTTP basic auth as GitLab's workhorse
 * answers it (any user name, a token as the password):
 *
 *   GET  /<full path>.git/info/refs?service=git-upload-pack
 *   POST /<full path>.git/git-upload-pack
 *
 * - no credentials, on a project that is not public: 401 with `WWW-Authenticate: Basic realm="GitLab"`;
 * - a token GitLab does not take (wrong, revoked, expired, a blocked user's) or one without the
 *   `read_repository` or `api` scope: 401 ("HTTP Basic: Access denied");
 * - a good token whose user may not read the project's code (below Reporter on a private project): 404;
 * - pushes (git-receive-pack) are refused: tests change a repository with `push()` on the file system.
 *
 * Each request is recorded with the token it carried (`requests`), to show which credential went where.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

/** Who may read a project's repository with a token, as the stand-in's users, tokens and memberships say. */
export type RepositoryAccess = (options: { fullPath: string; token: string | null }) => 'ok' | 'unauthorized' | 'not_found';

export type GitRequest = { method: string; path: string; token: string | null; user: string | null; status: number };

export type GitLabGitBackend = {
  requests: GitRequest[];
  /** The bare repository of a project (created empty the first time). */
  repositoryPath(fullPath: string): string;
  /** Pushes a branch of a working repository to the project's repository; returns the commit it had before (zeros if none). */
  push(options: { fullPath: string; from: string; branch: string }): { before: string; after: string };
  /** From now on, git requests wait (a slow GitLab: a clone stays under way) until `release()`; `held` counts those waiting. */
  hold(): void;
  release(): void;
  readonly held: number;
  /** Answers a request if it is a git one; false when it is not (the stand-in's REST routes answer it). */
  handle(request: http.IncomingMessage, response: http.ServerResponse): boolean;
  close(): void;
};

const GIT_PATH = /^\/(.+?)\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const ZERO = '0'.repeat(40);

export function createGitLabGitBackend(access: RepositoryAccess): GitLabGitBackend {
  const root = mkdtempSync(path.join(os.tmpdir(), 'duo-gitlab-repos-'));
  const requests: GitRequest[] = [];
  let holding = false;
  const waiting: Array<() => void> = [];

  const repositoryPath = (fullPath: string) => {
    const directory = path.join(root, `${fullPath}.git`);
    if (!existsSync(directory)) {
      mkdirSync(directory, { recursive: true });
      execFileSync('git', ['init', '-q', '--bare', directory]);
    }
    return directory;
  };

  /** Basic auth as GitLab reads it: the password is the token; the user name is anything (oauth2 for OAuth tokens). */
  const credentials = (request: http.IncomingMessage): { user: string; token: string } | null => {
    const match = /^Basic\s+(.+)$/i.exec(request.headers.authorization ?? '');
    if (!match) return null;
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return null;
    return { user: decoded.slice(0, colon), token: decoded.slice(colon + 1) };
  };

  const handle = (request: http.IncomingMessage, response: http.ServerResponse): boolean => {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const match = GIT_PATH.exec(url.pathname);
    if (!match) return false;
    const [, fullPath, action] = match;
    const given = credentials(request);
    const record = (status: number) =>
      requests.push({
        method: request.method ?? 'GET',
        path: url.pathname,
        token: given?.token ?? null,
        user: given?.user ?? null,
        status,
      });
    const deny = (status: number, body: string, headers: Record<string, string> = {}) => {
      record(status);
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(body);
    };
    const service = action === 'info/refs' ? url.searchParams.get('service') : action;
    if (service === 'git-receive-pack') {
      deny(403, 'You are not allowed to push code to this project.\n');
      return true;
    }
    if (service !== 'git-upload-pack') {
      // Only the smart protocol: GitLab does not serve the dumb one.
      deny(403, 'GitLab serves the smart HTTP protocol only.\n');
      return true;
    }
    const verdict = access({ fullPath: decodeURIComponent(fullPath), token: given?.token ?? null });
    if (verdict === 'unauthorized') {
      deny(401, 'HTTP Basic: Access denied. If a password was provided for Git authentication, the password was incorrect.\n', {
        'www-authenticate': 'Basic realm="GitLab"',
      });
      return true;
    }
    if (verdict === 'not_found' || !existsSync(path.join(root, `${decodeURIComponent(fullPath)}.git`))) {
      deny(404, "The project you were looking for could not be found or you don't have permission to view it.\n");
      return true;
    }
    const held = holding ? new Promise<void>((resolve) => waiting.push(resolve)) : Promise.resolve();
    void held.then(() =>
      runHttpBackend(request, response, { root, pathInfo: url.pathname, query: url.search.slice(1), user: given?.user ?? null }).then(
        record,
        () => record(500),
      ),
    );
    return true;
  };

  return {
    requests,
    repositoryPath,
    push: ({ fullPath, from, branch }) => {
      const target = repositoryPath(fullPath);
      let before = ZERO;
      try {
        before = execFileSync('git', ['-C', target, 'rev-parse', '--verify', '-q', `refs/heads/${branch}`], { encoding: 'utf8' }).trim();
      } catch {
        // A new branch.
      }
      execFileSync('git', ['-C', from, 'push', '-q', '--force', target, `${branch}:refs/heads/${branch}`]);
      const after = execFileSync('git', ['-C', target, 'rev-parse', `refs/heads/${branch}`], { encoding: 'utf8' }).trim();
      return { before, after };
    },
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      waiting.splice(0).forEach((resolve) => resolve());
    },
    get held() {
      return waiting.length;
    },
    handle,
    close: () => {
      waiting.splice(0).forEach((resolve) => resolve());
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** One CGI request to `git http-backend`: the request body on its stdin, its headers (and `Status:`) and body back. */
function runHttpBackend(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  options: { root: string; pathInfo: string; query: string; user: string | null },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(HTTP_BACKEND, [], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: options.root,
        GIT_HTTP_EXPORT_ALL: '1',
        GATEWAY_INTERFACE: 'CGI/1.1',
        REQUEST_METHOD: request.method ?? 'GET',
        PATH_INFO: options.pathInfo,
        QUERY_STRING: options.query,
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        ...(request.headers['content-length'] ? { CONTENT_LENGTH: request.headers['content-length'] } : {}),
        HTTP_CONTENT_ENCODING: request.headers['content-encoding'] ?? '',
        ...(request.headers['git-protocol'] ? { GIT_PROTOCOL: String(request.headers['git-protocol']) } : {}),
        REMOTE_USER: options.user ?? '',
        REMOTE_ADDR: request.socket.remoteAddress ?? '127.0.0.1',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    request.pipe(child.stdin);
    child.stdin.on('error', () => undefined);
    let head = Buffer.alloc(0);
    let status = 200;
    let headersSent = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersSent) {
        response.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        if (name === 'status') status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      response.writeHead(status, headers);
      headersSent = true;
      response.write(head.subarray(end + 4));
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (!headersSent) {
        response.writeHead(500).end();
        resolve(500);
        return;
      }
      response.end();
      resolve(code === 0 ? status : 500);
    });
  });
}
