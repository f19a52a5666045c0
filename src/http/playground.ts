import path from 'node:path';
import { Router } from 'express';
import { PROJECT_ROOT } from '../paths';
import { DUO_CHAT_PATH } from './duo-chat-page';
import { GRAPHQL_PATH } from './http-errors';
import { webSocketSources } from './content-security-policy';

const ASSETS_PATH = '/-/graphiql';

// Every file the page loads comes from our own npm packages: many users run offline.
// (Their package exports hide the UMD builds from require.resolve, so they are named by path.)
const packageFile = (name: string, file: string) => path.join(PROJECT_ROOT, 'node_modules', name, file);
const ASSETS: Record<string, string> = {
  'react.production.min.js': packageFile('react', 'umd/react.production.min.js'),
  'react-dom.production.min.js': packageFile('react-dom', 'umd/react-dom.production.min.js'),
  'graphiql.min.js': packageFile('graphiql', 'graphiql.min.js'),
  'graphiql.min.css': packageFile('graphiql', 'graphiql.min.css'),
  'graphql-ws.min.js': packageFile('graphql-ws', 'umd/graphql-ws.min.js'),
};

const DEFAULT_QUERY = `# Paste your token after "Bearer " in Headers, below.
# npm start prints a demo token on its first start.
# To chat about your code in the browser instead: ${DUO_CHAT_PATH}
query currentUser {
  currentUser {
    id
    username
    name
    duoChatAvailable
    duoCodeSuggestionsAvailable
    duoChatAvailableFeatures
  }
}
`;

function page(): string {
  const script = `
    const graphqlUrl = new URL(${JSON.stringify(GRAPHQL_PATH)}, window.location.href).toString();
    const socketUrl = graphqlUrl.replace(/^http/, 'ws');
    const sockets = new Map();
    function socketFor(headers) {
      const key = JSON.stringify(headers || {});
      if (!sockets.has(key)) {
        sockets.set(key, graphqlWs.createClient({ url: socketUrl, connectionParams: () => headers || {}, lazy: true }));
      }
      return sockets.get(key);
    }
    function operationType(params, documentAST) {
      const operations = (documentAST ? documentAST.definitions : []).filter((d) => d.kind === 'OperationDefinition');
      const chosen = operations.find((d) => d.name && d.name.value === params.operationName) || operations[0];
      return chosen ? chosen.operation : 'query';
    }
    async function fetcher(params, options) {
      const headers = Object.assign({}, options && options.headers);
      if (operationType(params, options && options.documentAST) === 'subscription') {
        return socketFor(headers).iterate(params);
      }
      const response = await fetch(graphqlUrl, {
        method: 'POST',
        headers: Object.assign({ 'Content-Type': 'application/json', Accept: 'application/json' }, headers),
        body: JSON.stringify(params),
      });
      return response.json();
    }
    ReactDOM.createRoot(document.getElementById('graphiql')).render(
      React.createElement(GraphiQL, {
        fetcher,
        defaultQuery: ${JSON.stringify(DEFAULT_QUERY)},
        defaultHeaders: JSON.stringify({ Authorization: 'Bearer ' }, null, 2),
        isHeadersEditorEnabled: true,
        shouldPersistHeaders: true,
        defaultEditorToolsVisibility: 'headers',
      }),
    );`;
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>duo-slice GraphQL playground</title>
  <link rel="stylesheet" href="${ASSETS_PATH}/graphiql.min.css">
  <style>html, body, #graphiql { height: 100%; margin: 0; }
    .duo-chat-link { position: fixed; top: 8px; right: 12px; z-index: 10; font: 13px sans-serif; }</style>
</head>
<body>
  <a class="duo-chat-link" href="${DUO_CHAT_PATH}">Open Duo Chat</a>
  <div id="graphiql">Loading the playground...</div>
  <script src="${ASSETS_PATH}/react.production.min.js"></script>
  <script src="${ASSETS_PATH}/react-dom.production.min.js"></script>
  <script src="${ASSETS_PATH}/graphql-ws.min.js"></script>
  <script src="${ASSETS_PATH}/graphiql.min.js"></script>
  <script>${script}</script>
</body>
</html>`;
}

/** Whether a GET to the GraphQL path comes from a browser that wants the playground. */
export function wantsPlayground(accept: string | undefined, query: Record<string, unknown>): boolean {
  return Boolean(accept?.includes('text/html')) && query.query === undefined;
}

/** GET /api/graphql from a browser: GraphiQL, with a headers editor and subscriptions over graphql-ws. */
export function playgroundRoutes(externalUrl: string | undefined): Router {
  const router = Router();
  const html = page();
  router.get(GRAPHQL_PATH, (request, response, next) => {
    if (!wantsPlayground(request.get('accept'), request.query)) return next();
    response.setHeader(
      'Content-Security-Policy',
      "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
        `font-src 'self' data:; connect-src 'self' ${webSocketSources(request, externalUrl)}`,
    );
    response.type('html').send(html);
  });
  router.get('/favicon.ico', (_request, response) => {
    response.status(204).end();
  });
  for (const [name, file] of Object.entries(ASSETS)) {
    router.get(`${ASSETS_PATH}/${name}`, (_request, response) => {
      response.setHeader('Cache-Control', 'public, max-age=86400');
      response.sendFile(file);
    });
  }
  return router;
}
