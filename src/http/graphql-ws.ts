import type { IncomingMessage } from 'node:http';
import { clientAddress } from './client-address';
import {
  getOperationAST,
  GraphQLError,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { tokenFromHeaders } from '../auth/tokens';
import type { Viewer } from '../auth/viewer';
import { createGraphQLContext } from '../graphql/context';
import { depthLimitRule } from '../graphql/depth-limit';
import { stripIntroducedFields, type StrippedDocument } from '../graphql/gl-introduced';
import { noMutationsRule } from '../graphql/no-mutations';
import { guardOperation } from '../graphql/operation-guard';
import { formatError } from '../graphql/plugins';
import { countSubscription, observeSocketServer } from '../metrics/record';
import type { Services } from '../services';
import { refusedUnsent, unavailableMessage } from '../unavailable';
import { TOO_MANY_SUBSCRIPTIONS, type SocketGuard } from './socket-guard';

export type GraphQLWsServer = { wss: WebSocketServer; close(): Promise<void> };

/** The token of a graphql-ws connection: in connection_init's payload (GraphiQL), else on the upgrade request. */
function connectionToken(params: Record<string, unknown> | undefined, request: IncomingMessage): string | null {
  const fromParams = params
    ? tokenFromHeaders(
        Object.fromEntries(
          // A value that is not a string is still a credential sent, so a wrong one (refused), never no token at all.
          Object.entries(params).map(([key, value]) => [
            key.toLowerCase(),
            typeof value === 'string' ? value : value == null ? undefined : JSON.stringify(value),
          ]),
        ),
      )
    : null;
  return fromParams ?? tokenFromHeaders(request.headers);
}

/** Errors shaped by the same formatter as HTTP, kept as GraphQLErrors for graphql-ws. */
/** graphql-js leaves codes off parse and validation errors; Apollo adds them, so do we (else they are masked). */
const withCode = (errors: readonly GraphQLError[], code: string) =>
  errors.map((error) =>
    error.extensions?.code
      ? error
      : new GraphQLError(error.message, {
          nodes: error.nodes,
          source: error.source,
          positions: error.positions,
          extensions: { ...error.extensions, code },
        }),
  );

const format = (errors: readonly GraphQLError[]) =>
  errors.map((error) => {
    const formatted = formatError(error.toJSON(), error);
    return new GraphQLError(formatted.message, { nodes: error.nodes, path: error.path, extensions: formatted.extensions });
  });

type Connection = {
  viewer: Viewer | null;
  token: string | null;
  address: string | undefined;
  /** Subscription id -> its slot, while it holds one. */
  slots: Map<string, string>;
  /** Ids whose Subscribe is still being checked (onSubscribe has not answered yet). */
  starting: Set<string>;
  recheck?: NodeJS.Timeout;
};

// graphql-ws's close code for a connection whose token stopped being valid (as at connect).
const CLOSE_FORBIDDEN = 4403;
/** A spent rate budget: WebSocket's "try again later" (graphql-ws' own 4429 means too many connection_inits), retried with backoff. */
const CLOSE_TRY_AGAIN_LATER = 1013;
/** The longest subscription id taken (graphql-ws clients send UUIDs). */
const MAX_SUBSCRIPTION_ID = 255;

/**
 * GraphQL over WebSocket (the graphql-transport-ws protocol) on the GraphQL path, for GraphiQL and
 * standard clients. A bad token closes the connection as forbidden; no token is anonymous. Every
 * operation goes through the same limits as POST /api/graphql (guardOperation, the rate budget),
 * and re-checks the token: one that stopped being valid closes the socket.
 */
export function createGraphQLWsServer(services: Services, schema: GraphQLSchema, guard: SocketGuard): GraphQLWsServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: guard.maxMessageBytes });
  observeSocketServer('graphql_ws', wss);
  const connections = new WeakMap<object, Connection>();
  // Documents @gl_introduced stripped, and the operation run: their results get null where the stripped fields were.
  const strippedDocuments = new WeakMap<DocumentNode, { stripped: StrippedDocument; operationName: string | undefined }>();
  const restore = (document: DocumentNode, result: ExecutionResult) => {
    const found = strippedDocuments.get(document);
    found?.stripped.restore(result.data, { schema, operationName: found.operationName });
  };
  const releaseAll = (connection: Connection | undefined) => {
    if (!connection) return;
    clearInterval(connection.recheck);
    for (const slot of connection.slots.values()) guard.releaseSlot(slot);
    connection.slots.clear();
  };
  // Null (and the socket closed) when the token no longer holds.
  const stillValid = async (context: { extra: { socket: WebSocket } }, connection: Connection): Promise<boolean> => {
    if (!connection.token) return true;
    if (context.extra.socket.readyState !== context.extra.socket.OPEN) return false;
    const viewer = await guard.reauthenticate(connection.token);
    if (viewer) {
      connection.viewer = viewer;
      return true;
    }
    services.logger.info(
      { event: 'socket_token_invalid', transport: 'graphql-ws', userId: connection.viewer?.user.id },
      'closing a socket whose token is no longer valid',
    );
    context.extra.socket.close(CLOSE_FORBIDDEN, 'Forbidden');
    return false;
  };
  /** One operation's checks (token, rate, parse, validation, limits, a slot): what graphql-ws runs, or the errors it answers. */
  const startOperation = async (
    context: { extra: { socket: WebSocket } },
    connection: Connection,
    id: string,
    payload: SubscribePayload,
  ): Promise<ExecutionArgs | GraphQLError[]> => {
    let valid: boolean;
    try {
      valid = await stillValid(context, connection);
    } catch (error) {
      // The token could not be re-checked (GitLab, the database or Redis did not answer): this operation fails, the
      // socket stays, and the next operation checks again.
      const unavailable = unavailableMessage(error);
      if (!unavailable) throw error;
      if (!refusedUnsent(error))
        services.logger.warn({ event: 'socket_reauth_unavailable', transport: 'graphql-ws', err: error }, unavailable);
      return format([new GraphQLError(unavailable, { extensions: { code: 'SERVICE_UNAVAILABLE' } })]);
    }
    if (!valid) return format([new GraphQLError('401 Unauthorized', { extensions: { code: 'UNAUTHENTICATED' } })]);
    const refused = await guard.admit(connection.viewer, connection.address);
    if (refused) return format([refused]);
    const stripped = stripIntroducedFields(payload.query, { maxTokens: guard.maxTokens });
    let document;
    try {
      document = parse(stripped?.query ?? payload.query, { maxTokens: guard.maxTokens });
    } catch (error) {
      return format(withCode([error as GraphQLError], 'GRAPHQL_PARSE_FAILED'));
    }
    const errors = validate(schema, document, [...specifiedRules, depthLimitRule(services.config.graphqlMaxDepth), noMutationsRule]);
    if (errors.length > 0) return format(withCode(errors, 'GRAPHQL_VALIDATION_FAILED'));
    const operation = getOperationAST(document, payload.operationName);
    if (!operation)
      return format([new GraphQLError('Unable to identify operation', { extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } })]);
    try {
      guardOperation({
        schema,
        document,
        operation,
        variables: payload.variables,
        viewer: connection.viewer,
        limits: guard.limits,
        stripped,
      });
    } catch (error) {
      if (error instanceof GraphQLError) return format([error]);
      throw error;
    }
    if (operation.operation === 'subscription') {
      const slot = guard.acquireSlot(connection.viewer, connection.address);
      if (!slot) return format([new GraphQLError(TOO_MANY_SUBSCRIPTIONS, { extensions: { code: 'RATE_LIMITED' } })]);
      connection.slots.set(id, slot);
    }
    if (stripped) strippedDocuments.set(document, { stripped, operationName: operation.name?.value });
    const args: ExecutionArgs = {
      schema,
      document,
      variableValues: payload.variables,
      operationName: payload.operationName,
      contextValue: createGraphQLContext(services, connection.viewer, crypto.randomUUID()),
    };
    return args;
  };
  const disposable = useServer<Record<string, unknown> | undefined, { socket: WebSocket; request: IncomingMessage }>(
    {
      schema,
      onConnect: async (context) => {
        const token = connectionToken(context.connectionParams, context.extra.request);
        const connection: Connection = {
          viewer: null,
          token,
          address: clientAddress(context.extra.request),
          slots: new Map(),
          starting: new Set(),
        };
        if (token) {
          let notAnswered = false;
          const viewer = await guard.reauthenticate(token).catch((error: unknown) => {
            // The database or Redis did not answer: not the client's fault, and not for ever. 1011 lets it come back
            // (graphql-ws' own 4500 for a failed connect is one its clients do not retry).
            const unavailable = unavailableMessage(error);
            if (!unavailable) throw error;
            if (!refusedUnsent(error))
              services.logger.warn({ event: 'socket_connect_unavailable', transport: 'graphql-ws', err: error }, unavailable);
            context.extra.socket.close(1011, 'Service unavailable');
            notAnswered = true;
            return null;
          });
          if (!viewer) {
            // A wrong token spends its address's anonymous budget, as on HTTP; once it is spent the socket is told so.
            const refused = notAnswered ? null : await guard.admit(null, connection.address).catch(() => null);
            if (refused && context.extra.socket.readyState === context.extra.socket.OPEN)
              context.extra.socket.close(CLOSE_TRY_AGAIN_LATER, 'Too many requests');
            return false;
          }
          // Closed while its token was checked: graphql-ws has already run onClose, before this
          // connection was known, so nothing would ever stop a re-check started now.
          if (context.extra.socket.readyState !== context.extra.socket.OPEN) return false;
          connection.viewer = viewer;
          connection.recheck = setInterval(() => void stillValid(context, connection).catch(() => undefined), guard.reauthIntervalMs);
          connection.recheck.unref();
        }
        connections.set(context, connection);
        return true;
      },
      onSubscribe: async (context, id, payload) => {
        const connection = connections.get(context);
        if (!connection) return format([new GraphQLError('Unauthorized', { extensions: { code: 'UNAUTHENTICATED' } })]);
        // Every event of the subscription carries its id: a client's UUID, not a payload of its own.
        if (id.length > MAX_SUBSCRIPTION_ID)
          return format([
            new GraphQLError(`id is too long (maximum is ${MAX_SUBSCRIPTION_ID} characters)`, {
              extensions: { code: 'BAD_USER_INPUT', field: 'id' },
            }),
          ]);
        // graphql-ws takes a Subscribe whose id the client completed while its first Subscribe is
        // still being checked here, and keeps only the second's stream: the first's would run on,
        // listening and holding its slot, until the process ends. An id in use is refused.
        if (connection.starting.has(id) || connection.slots.has(id))
          return format([new GraphQLError(`Subscriber for ${id} already exists`, { extensions: { code: 'BAD_REQUEST' } })]);
        connection.starting.add(id);
        try {
          return await startOperation(context, connection, id, payload);
        } finally {
          connection.starting.delete(id);
        }
      },
      onOperation: (_context, _id, _payload, _args, result) => countSubscription('graphql_ws', result),
      onComplete: (context, id) => {
        const connection = connections.get(context);
        const slot = connection?.slots.get(id);
        if (slot === undefined) return;
        connection!.slots.delete(id);
        guard.releaseSlot(slot);
      },
      onClose: (context) => releaseAll(connections.get(context)),
      onNext: async (context, _id, _payload, args, result) => {
        // Every event is for the token's holder only while the token holds: a revoked token or a blocked user closes
        // the socket before the next event goes out (the auth cache makes this a lookup; changes made through the
        // service clear it at once). graphql-ws does not send on a closed socket.
        const connection = connections.get(context);
        if (connection) await stillValid(context, connection).catch(() => true);
        restore(args.document, result);
        return result.errors ? { ...result, errors: format(result.errors) } : result;
      },
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
