// The layers of duo-slice and what may import what (docs/architecture.md draws it). Checked by
// test/architecture.e2e.test.ts and `npm run lint`, so no arrow runs back up again.
const ENTRY = '^src/(main|start-service)\\.ts$|^src/cli/';
const EDGES = '^src/(http|resolvers|workers|mcp)/';
const GRAPHQL_EDGE = '^src/graphql/';
const FEATURES =
  '^src/(auth|chat|suggestions|search|tools|indexing|gatekeeper|gitlab|namespaces|users|demo|evaluation|events|parsing|llm|metrics)/';
const FOUNDATION_FILES = [
  'config',
  'errors',
  'logger',
  'paths',
  'random',
  'redis',
  'redis-keys',
  'redis-availability',
  'global-id',
  'validation',
  'queues',
  'revision',
  'progress-bar',
  'instance',
  'event-loop-monitor',
  'turn-batch',
].join('|');
const FOUNDATION = `^src/(db/|(${FOUNDATION_FILES})\\.ts$)`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules never import each other in a circle.',
      from: { path: '^src/' },
      to: { circular: true, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'foundation-stays-below',
      severity: 'error',
      comment: 'Config, errors, logging, ids, Redis keys, queues and the database know nothing of the features or edges above them.',
      from: { path: FOUNDATION },
      to: { path: `${FEATURES}|${EDGES}|${GRAPHQL_EDGE}|${ENTRY}|^src/services\\.ts$`, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'features-below-edges',
      severity: 'error',
      comment:
        'Services do not import resolvers, routes, workers, the GraphQL edge or entry points: edges call services, never the reverse.',
      from: { path: FEATURES },
      to: { path: `${EDGES}|${GRAPHQL_EDGE}|${ENTRY}` },
    },
    {
      name: 'graphql-edge-below-resolvers',
      severity: 'error',
      comment: 'src/graphql (context, plugins, scalars, limits) serves resolvers and transports; the schema is built in src/resolvers.',
      from: { path: GRAPHQL_EDGE },
      to: { path: `${EDGES}|${ENTRY}` },
    },
    {
      name: 'edges-below-entry',
      severity: 'error',
      comment: 'Routes, resolvers and workers are wired by the composition root, not the other way round.',
      from: { path: `${EDGES}|${GRAPHQL_EDGE}` },
      to: { path: ENTRY },
    },
    {
      name: 'workers-are-not-http',
      severity: 'error',
      comment: 'Queue processors call services; they do not reach into HTTP routes or resolvers.',
      from: { path: '^src/workers/' },
      to: { path: '^src/(http|resolvers|mcp)/' },
    },
    {
      name: 'chat-searches-through-the-tool',
      severity: 'error',
      comment: 'Chat reaches code search only through the Semantic Search Tool (src/tools); search-scope only normalises input.',
      from: { path: '^src/chat/' },
      to: { path: '^src/search/', pathNot: '^src/search/search-scope\\.ts$' },
    },
    {
      name: 'runtime-not-training',
      severity: 'error',
      comment: 'The service loads the gatekeeper classifier; training, data generation and evaluation are offline code.',
      from: { path: '^src/', pathNot: '^src/gatekeeper/training/' },
      to: { path: '^src/gatekeeper/training/' },
    },
    {
      name: 'search-not-training',
      severity: 'error',
      comment:
        'Search reads the learned vocabulary and ranker as data; mining the corpus and learning from it are offline code, run by commands.',
      from: { path: '^src/', pathNot: '^src/(search/training|cli)/' },
      to: { path: '^src/search/training/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/db/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
