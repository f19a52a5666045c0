import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Request, Response } from 'express';
import type { GitLabConfig } from '../config';
import { GitLabUnavailableError } from '../gitlab/gitlab-client';
import type { Logger } from '../logger';
import { sendAppError, sendError } from './http-errors';
import { locals } from './locals';

/** Hop-by-hop headers (RFC 9110 §7.6.1) and the ones the connection to GitLab sets for itself. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'host',
]);

/**
 * Headers GitLab (nginx, Workhorse, Rails' trusted proxies) would take as said by a proxy it trusts: the
 * client's address and scheme, Workhorse's own signals (X-Sendfile-Type makes Rails hand file bodies to
 * Workhorse). A caller cannot say them through us, and we add none.
 */
const PROXY_SAID =
  /^(x-forwarded-|forwarded$|x-real-ip$|x-client-ip$|true-client-ip$|x-sendfile-type$|x-accel-|gitlab-workhorse|x-gitlab-workhorse)/;

/** Raw request bodies express.json has read, kept for the pass-through (the stream is gone once parsed). */
const rawBodies = new WeakMap<IncomingMessage, Buffer>();

/** express.json's `verify`: keeps the bytes of a parsed body, so a request we do not answer reaches GitLab unchanged. */
export function keepRawBody(request: IncomingMessage, _response: unknown, body: Buffer): void {
  rawBodies.set(request, body);
}

/**
 * The request target to send on, or null when it is not a plain path of this instance: an absolute URL
 * or `//host` target, a backslash, or a `.`/`..` segment (raw or percent-encoded) that GitLab's front
 * proxy would resolve to a path we did not mean to pass on.
 */
export function passThroughTarget(originalUrl: string): string | null {
  if (!originalUrl.startsWith('/') || originalUrl.startsWith('//')) return null;
  const path = originalUrl.split('?')[0];
  if (path.includes('\\') || /%5c/i.test(path)) return null;
  if (/(^|\/)(\.|%2e){1,2}(\/|$)/i.test(path)) return null;
  return originalUrl;
}

/** The caller's headers as GitLab gets them: hop-by-hop, connection-named and proxy-said ones dropped. */
export function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || named.has(lower) || PROXY_SAID.test(lower)) continue;
    result[lower] = value;
  }
  return result;
}

export type PassThroughOptions = {
  gitlab: GitLabConfig;
  request: Request;
  response: Response;
  /** The request body limit (MAX_BODY_BYTES): a streamed body beyond it is cut and answered 413. */
  maxBodyBytes: number;
  logger: Logger;
  /** Default: the request's own URL (path and query). */
  target?: string;
};

/**
 * Sends a request we do not answer on to GitLab, unchanged: its method, path, query, body and the caller's
 * own headers (Authorization, PRIVATE-TOKEN, cookies), to GITLAB_URL only; GitLab's answer streams back as
 * it comes. GitLab not answering within GITLAB_TIMEOUT_MS (headers, or silence mid-body) is a 503 naming it.
 */
export function passThroughToGitLab(options: PassThroughOptions): Promise<void> {
  const { gitlab, request, response, logger } = options;
  const target = passThroughTarget(options.target ?? request.originalUrl);
  if (!target) {
    sendError(request, response, 400, '400 Bad request - the path is not one GitLab serves');
    return Promise.resolve();
  }
  const base = new URL(gitlab.url);
  const headers = forwardedHeaders(request.headers);
  const raw = rawBodies.get(request);
  if (raw) {
    // express.json decoded the body (gzip included): it goes on as the bytes it decoded to.
    delete headers['content-encoding'];
    headers['content-length'] = String(raw.length);
  } else {
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > options.maxBodyBytes) {
      // The body is left unread: this connection is not used again.
      response.setHeader('Connection', 'close');
      sendError(request, response, 413, '413 Request Entity Too Large');
      return Promise.resolve();
    }
  }
  const startedAt = performance.now();
  const requestId = locals(response).requestId;
  return new Promise<void>((resolve) => {
    const client = base.protocol === 'https:' ? https : http;
    const upstream = client.request({
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port || undefined,
      method: request.method,
      path: `${base.pathname.replace(/\/+$/, '')}${target}`,
      headers,
      // Idle time on the socket: before the answer's headers and between its pieces.
      timeout: gitlab.timeoutMs,
    });
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      resolve();
    };
    const fail = (error: GitLabUnavailableError) => {
      logger.warn({ event: 'gitlab_pass_through_failed', requestId, method: request.method, err: error }, error.message);
      if (!response.headersSent) sendAppError(request, response, error);
      else response.destroy(error);
      done();
    };
    upstream.on('timeout', () => upstream.destroy(new GitLabUnavailableError(gitlab.url, `no answer within ${gitlab.timeoutMs} ms`)));
    upstream.on('error', (error) => {
      if (settled) return;
      fail(error instanceof GitLabUnavailableError ? error : new GitLabUnavailableError(gitlab.url, error.message, error));
    });
    upstream.on('response', (answer) => {
      response.status(answer.statusCode ?? 502);
      for (const [name, value] of Object.entries(forwardedAnswerHeaders(answer))) response.setHeader(name, value);
      answer.pipe(response);
      answer.on('error', (error) => fail(new GitLabUnavailableError(gitlab.url, error.message, error)));
      response.on('finish', () => {
        logger.debug(
          {
            event: 'gitlab_pass_through',
            requestId,
            method: request.method,
            // The path only: a query string may carry a token (private_token=).
            path: target.split('?')[0],
            status: answer.statusCode,
            durationMs: Math.round(performance.now() - startedAt),
          },
          'request passed on to GitLab',
        );
        done();
      });
    });
    // The caller went away: so does the request to GitLab.
    response.on('close', () => {
      if (!response.writableFinished) upstream.destroy();
      done();
    });
    if (raw) {
      upstream.end(raw);
      return;
    }
    let received = 0;
    request.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received <= options.maxBodyBytes) return;
      request.unpipe(upstream);
      upstream.destroy();
      settled = true;
      if (!response.headersSent) {
        response.setHeader('Connection', 'close');
        sendError(request, response, 413, '413 Request Entity Too Large');
      }
      resolve();
    });
    request.pipe(upstream);
  });
}

/** GitLab's answer headers as the caller gets them: hop-by-hop ones dropped. */
function forwardedAnswerHeaders(answer: IncomingMessage): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    result[name] = value;
  }
  return result;
}
