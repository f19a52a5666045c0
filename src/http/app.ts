import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type Express } from 'express';
import type { Server } from 'node:http';
import { createGraphQLContext, type GraphQLContext } from '../graphql/context';
import { depthLimitRule } from '../graphql/depth-limit';
import { errorLoggingPlugin, formatError, operationGuardPlugin } from '../graphql/plugins';
import { buildGraphQLSchema } from '../resolvers/schema';
import { metricsPlugin } from '../graphql/metrics-plugin';
import type { Services } from '../services';
import { authenticateMiddleware } from './authenticate.middleware';
import { errorHandler, GRAPHQL_PATH, sendError } from './http-errors';
import { healthRoutes } from './health.routes';
import { locals } from './locals';
import { metricsRoutes } from './metrics.routes';
import { requestMetricsMiddleware } from './request-metrics.middleware';
import { playgroundRoutes } from './playground';
import { rateLimitMiddleware } from './rate-limit.middleware';
import { TRUSTED_PROXIES } from './client-address';
import { createRequestLimiter } from '../auth/rate-limits';
import { requestIdMiddleware } from './request-id.middleware';
import { safeJsonBody } from './safe-json.middleware';
import { restV4Routes } from './rest-v4.routes';
import { webhookRoutes } from './webhooks.routes';
import { semanticSearchRoutes } from './semantic-search.routes';
import { codeSuggestionsRoutes } from './code-suggestions.routes';
import { extraBatchMessages, MCP_PATH, mcpRoutes } from './mcp.routes';
import { restSurface } from './rest-scopes';
import { oauthRoutes } from './oauth.routes';
import { repositoryFilesRoutes } from './repository-files.routes';
import { gitCommandRoutes } from './git-command.routes';
import { duoChatPageRoutes } from './duo-chat-page';
import { avatarRoutes } from './avatar.routes';
import { graphqlPassThrough, oauthPassThrough, restPassThrough, versionPassThrough } from './gitlab-connected.routes';
import { keepRawBody } from './gitlab-pass-through';

export type HttpApp = { app: Express; apollo: ApolloServer<GraphQLContext> };

/** Builds the one-port HTTP surface: health, GitLab REST, GraphQL and its playground. */
export async function createHttpApp(services: Services, httpServer: Server): Promise<HttpApp> {
  const schema = buildGraphQLSchema();
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    formatError,
    validationRules: [depthLimitRule(services.config.graphqlMaxDepth)],
    // Counted while parsing: thousands of aliases are refused before validation (quadratic in them) runs.
    parseOptions: { maxTokens: services.config.graphqlMaxTokens },
    introspection: true,
    // Our own shutdown (src/main.ts) stops Apollo in order; Apollo's would re-raise the signal mid-way.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginDrainHttpServer({ httpServer }),
      operationGuardPlugin({
        schema,
        limits: {
          maxComplexity: services.config.graphqlMaxComplexity,
          maxJsonDepth: services.config.maxJsonDepth,
          maxDepth: services.config.graphqlMaxDepth,
        },
        maxTokens: services.config.graphqlMaxTokens,
      }),
      errorLoggingPlugin(services.logger),
      metricsPlugin(schema),
    ],
  });
  await apollo.start();

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', TRUSTED_PROXIES);
  app.use(requestMetricsMiddleware());
  app.use(requestIdMiddleware());
  app.use('/-', healthRoutes(services));
  app.use('/-', metricsRoutes(services));
  app.use(playgroundRoutes(services.config.externalUrl));
  app.use(avatarRoutes(services));
  app.use(duoChatPageRoutes(services.config.duoChatDir, services.config.externalUrl));
  // Webhooks carry the project's secret instead of a user's token.
  app.use(
    '/api/v4/webhooks',
    rateLimitMiddleware({
      redis: services.redis,
      keyPrefix: services.config.redisPrefix,
      points: services.config.webhookRateLimitPerMinute,
      logger: services.logger,
      name: 'webhook-rate',
      byAddress: true,
    }),
  );
  app.use('/api/v4/webhooks', webhookRoutes(services));
  const rateLimitOptions = {
    redis: services.redis,
    keyPrefix: services.config.redisPrefix,
    points: services.config.rateLimitPerMinute,
    logger: services.logger,
  };
  const rateLimit = rateLimitMiddleware(rateLimitOptions);
  // Wrong tokens spend their address's anonymous budget of the same limit, on every route that takes a token.
  const wrongTokens = createRequestLimiter(rateLimitOptions);
  // Before the API's authentication: these take tokens the API would refuse (mcp scope; any scope for token info).
  // The same budget; a JSON-RPC batch spends one request for each of its messages.
  app.use(
    MCP_PATH,
    mcpRoutes(services, { rateLimit, batchRateLimit: rateLimitMiddleware({ ...rateLimitOptions, cost: extraBatchMessages }), wrongTokens }),
  );
  // Connected mode: GitLab's sign-in pages and OAuth API are GitLab's own (docs/gitlab-connected.md).
  const gitlab = services.config.gitlab;
  if (gitlab) app.use('/oauth', oauthPassThrough(services, gitlab, rateLimit));
  app.use('/oauth', oauthRoutes(services, rateLimit, wrongTokens));
  app.use('/api', authenticateMiddleware(services.prisma, restSurface, wrongTokens));
  app.use('/api', rateLimit);
  // Before the general body parser: this endpoint has GitLab's own, smaller body limit.
  app.use('/api/v4/code_suggestions', codeSuggestionsRoutes(services));
  app.use(
    '/api',
    // The parsed body's bytes are kept for the requests passed on to GitLab unchanged (connected mode).
    express.json({ limit: services.config.maxBodyBytes, ...(gitlab ? { verify: keepRawBody } : {}) }),
    safeJsonBody(services.config.maxJsonDepth),
  );
  if (gitlab) app.use('/api/v4', versionPassThrough(services, gitlab));
  app.use('/api/v4', restV4Routes(services));
  app.use('/api/v4', semanticSearchRoutes(services));
  // Connected mode: files are read from GitLab itself at any ref (the IDE's merge request diffs), not from our index.
  if (!gitlab) app.use('/api/v4', repositoryFilesRoutes(services));
  app.use('/api/v4', gitCommandRoutes(services));
  if (gitlab) app.use(GRAPHQL_PATH, graphqlPassThrough({ services, gitlab, schema, apollo }));
  app.use(
    GRAPHQL_PATH,
    expressMiddleware(apollo, {
      context: async ({ res }) => createGraphQLContext(services, locals(res).viewer, locals(res).requestId, locals(res).receivedAt),
    }),
  );
  // Connected mode: the rest of GitLab's REST API is GitLab's, so an IDE needs one instance URL for all of it.
  if (gitlab) app.use('/api/v4', restPassThrough(services, gitlab));
  app.use('/api', (request, response) => sendError(request, response, 404, '404 Not Found'));
  app.use(errorHandler(services.logger));
  return { app, apollo };
}
