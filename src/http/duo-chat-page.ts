import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { Router, type Request } from 'express';
import { webSocketSources } from './content-security-policy';

/** Where the chat page lives; Vite builds it with this base (web/vite.config.mjs). */
export const DUO_CHAT_PATH = '/-/duo-chat';

/** `/<project's full path>/-/blob/<ref>/<file path>`, as GitLab's web UI and our results' file_url spell a file. */
const BLOB_URL = /^\/(?!api\/)((?:[^/-][^/]*\/)*[^/-][^/]*)\/-\/blob\/([^/]+)\/(.+)$/;

const decodePathPart = (part: string | undefined): string | null => {
  if (part === undefined) return null;
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
};

// Everything comes from this origin, its WebSockets too: the page works offline and cannot leak to other hosts.
const contentSecurityPolicy = (request: Request, externalUrl: string | undefined) =>
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src " +
  `'self' ${webSocketSources(request, externalUrl)}; frame-ancestors 'none'; base-uri 'self'; form-action 'none'`;

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Duo Chat</title></head>
<body><p>The chat page has not been built. Run <code>npm run build</code> (or <code>npm start</code>, which builds it) and
reload.</p></body></html>`;

/**
 * GET /-/duo-chat: the Duo Chat page built by Vite from web/ into `directory` (DUO_CHAT_DIR); GET / leads there.
 * `externalUrl` (EXTERNAL_URL) is a host its sockets may reach besides the one the browser used.
 */
export function duoChatPageRoutes(directory: string, externalUrl: string | undefined): Router {
  const router = Router();
  const sendPage: express.RequestHandler = (request, response) => {
    response.setHeader('Content-Security-Policy', contentSecurityPolicy(request, externalUrl));
    response.setHeader('Cache-Control', 'no-cache');
    const index = path.join(directory, 'index.html');
    if (!existsSync(index)) {
      response.status(503).type('html').send(NOT_BUILT);
      return;
    }
    // With `root`, only the file's own name is checked for dot-segments, not the (possibly hidden) directory.
    response.sendFile('index.html', { root: directory });
  };
  router.get([DUO_CHAT_PATH, `${DUO_CHAT_PATH}/`], sendPage);
  // The instance's root opens the one page it has (GitLab's sends a browser to its dashboard).
  router.get('/', (_request, response) => response.redirect(302, DUO_CHAT_PATH));
  // GitLab's blob URLs (the file_url of semantic search and MCP results) open the file in the page's file view. The
  // line anchor (#L10-20) is the browser's: it keeps it across the redirect, and the page reads it.
  router.get(BLOB_URL, (request, response) => {
    const [project, ref, path] = (BLOB_URL.exec(request.path) ?? []).slice(1).map(decodePathPart);
    if (!project || !ref || !path) return void response.status(404).type('text').send('Not Found');
    response.redirect(302, `${DUO_CHAT_PATH}?${new URLSearchParams({ project, ref, path }).toString()}`);
  });
  // Vite names assets by content hash, so they can be kept for good.
  router.use(
    `${DUO_CHAT_PATH}/assets`,
    express.static(path.join(directory, 'assets'), { immutable: true, maxAge: '365d', index: false, fallthrough: false }),
  );
  return router;
}
