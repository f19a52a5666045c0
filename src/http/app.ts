import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type Express } from 'express';
import type { Server } from 'node:http';
import { createGraphQLContext, type GraphQLContext } from '../graphql/context';
import { depthLimitRule } from '../graphql/depth-limit';
import { complexityPlugin, errorLoggingPlugin, formatError, scopePlugin } from '../graphql/plugins';
import { buildGraphQLSchema } from '../resolvers/schema';
import type { Services } from '../services';
import { authenticateMiddleware } from './authenticate.middleware';
import { errorHandler, GRAPHQL_PATH, sendError } from './http-errors';
import { healthRoutes } from './health.routes';
import { locals } from './locals';
import { playgroundRoutes } from './playground';
import { rateLimitMiddleware } from './rate-limit.middleware';
import { requestIdMiddleware } from './request-id.middleware';
import { restV4Routes } from './rest-v4.routes';
import { webhookRoutes } from './webhooks.routes';
import { semanticSearchRoutes } from './semantic-search.routes';
import { codeSuggestionsRoutes } from './code-suggestions.routes';
import { detectIntent } from '../suggestions/detect-intent';

export type HttpApp = { app: Express; apollo: ApolloServer<GraphQLContext> };

/** Builds the one-port HTTP surface: health, GitLab REST, GraphQL and its playground. */
export async function createHttpApp(services: Services, httpServer: Server): Promise<HttpApp> {
  const schema = buildGraphQLSchema();
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    formatError,
    validationRules: [depthLimitRule(services.config.graphqlMaxDepth)],
    introspection: true,
    // Our own shutdown (src/main.ts) stops Apollo in order; Apollo's would re-raise the signal mid-way.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginDrainHttpServer({ httpServer }),
      scopePlugin(),
      complexityPlugin(schema, services.config.graphqlMaxComplexity),
      errorLoggingPlugin(services.logger),
    ],
  });
  await apollo.start();

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.use(requestIdMiddleware());
  app.use('/-', healthRoutes(services));
  app.use(playgroundRoutes());
  // Webhooks carry the project's secret instead of a user's token.
  app.use('/api/v4/webhooks', webhookRoutes(services));
  app.use('/api', authenticateMiddleware(services.prisma));
  app.use('/api', rateLimitMiddleware({ redis: services.redis, keyPrefix: services.config.redisPrefix, pointsPerMinute: services.config.rateLimitPerMinute, logger: services.logger }));
  // Before the general body parser: this endpoint has GitLab's own, smaller body limit.
  app.use('/api/v4/code_suggestions', codeSuggestionsRoutes(services, (input) => detectIntent(input)));
  app.use('/api', express.json({ limit: services.config.maxBodyBytes }));
  app.use('/api/v4', restV4Routes(services));
  app.use('/api/v4', semanticSearchRoutes(services));
  app.use(
    GRAPHQL_PATH,
    expressMiddleware(apollo, {
      context: async ({ res }) => createGraphQLContext(services, locals(res).viewer, locals(res).requestId),
    }),
  );
  app.use('/api', (request, response) => sendError(request, response, 404, '404 Not Found'));
  app.use(errorHandler(services.logger));
  return { app, apollo };
}
