import type { IncomingMessage } from 'node:http';
import { GraphQLError, parse, specifiedRules, validate, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { authenticateToken } from '../auth/authenticate';
import { tokenFromHeaders } from '../auth/tokens';
import type { Viewer } from '../auth/viewer';
import { createGraphQLContext } from '../graphql/context';
import { depthLimitRule } from '../graphql/depth-limit';
import { noMutationsRule } from '../graphql/no-mutations';
import { formatError } from '../graphql/plugins';
import { countSubscription, observeSocketServer } from '../metrics/record';
import type { Services } from '../services';

export type GraphQLWsServer = { wss: WebSocketServer; close(): Promise<void> };

/** The token of a graphql-ws connection: in connection_init's payload (GraphiQL), else on the upgrade request. */
function connectionToken(params: Record<string, unknown> | undefined, request: IncomingMessage): string | null {
  const fromParams = params ? tokenFromHeaders(Object.fromEntries(Object.entries(params).map(([key, value]) => [key.toLowerCase(), typeof value === 'string' ? value : undefined]))) : null;
  return fromParams ?? tokenFromHeaders(request.headers);
}

/** Errors shaped by the same formatter as HTTP, kept as GraphQLErrors for graphql-ws. */
/** graphql-js leaves codes off parse and validation errors; Apollo adds them, so do we (else they are masked). */
const withCode = (errors: readonly GraphQLError[], code: string) =>
  errors.map((error) => (error.extensions?.code ? error : new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, extensions: { ...error.extensions, code } })));

const format = (errors: readonly GraphQLError[]) =>
  errors.map((error) => {
    const formatted = formatError(error.toJSON(), error);
    return new GraphQLError(formatted.message, { nodes: error.nodes, path: error.path, extensions: formatted.extensions });
  });

/**
 * GraphQL over WebSocket (the graphql-transport-ws protocol) on the GraphQL path, for GraphiQL and
 * standard clients. A bad token closes the connection as forbidden; no token is anonymous.
 */
export function createGraphQLWsServer(services: Services, schema: GraphQLSchema): GraphQLWsServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  observeSocketServer('graphql_ws', wss);
  const viewers = new WeakMap<object, Viewer | null>();
  const disposable = useServer(
    {
      schema,
      onConnect: async (context) => {
        const token = connectionToken(context.connectionParams, context.extra.request);
        if (!token) {
          viewers.set(context, null);
          return true;
        }
        try {
          viewers.set(context, await authenticateToken(services.prisma, token));
          return true;
        } catch {
          return false;
        }
      },
      onSubscribe: (context, _id, payload) => {
        let document;
        try {
          document = parse(payload.query);
        } catch (error) {
          return format(withCode([error as GraphQLError], 'GRAPHQL_PARSE_FAILED'));
        }
        const errors = validate(schema, document, [...specifiedRules, depthLimitRule(services.config.graphqlMaxDepth), noMutationsRule]);
        if (errors.length > 0) return format(withCode(errors, 'GRAPHQL_VALIDATION_FAILED'));
        const args: ExecutionArgs = {
          schema,
          document,
          variableValues: payload.variables,
          operationName: payload.operationName,
          contextValue: createGraphQLContext(services, viewers.get(context) ?? null, crypto.randomUUID()),
        };
        return args;
      },
      onOperation: (_context, _id, _payload, _args, result) => countSubscription('graphql_ws', result),
      onNext: (_context, _id, _payload, _args, result) => (result.errors ? { ...result, errors: format(result.errors) } : result),
      onError: (_context, _id, _payload, errors) => format(errors),
    },
    wss,
  );
  return {
    wss,
    close: async () => {
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
