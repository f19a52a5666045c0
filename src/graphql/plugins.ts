import { createHash } from 'node:crypto';
import type { ApolloServerPlugin } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { isAppError, type AppErrorCode } from '../errors';
import type { Logger } from '../logger';
import { refusedUnsent, unavailableMessage } from '../unavailable';
import type { GraphQLContext } from './context';
import { stripIntroducedFields } from './gl-introduced';
import { guardOperation, type OperationLimits } from './operation-guard';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export type OperationGuardPluginOptions = {
  schema: GraphQLSchema;
  limits: OperationLimits;
  /** Apollo's parse limit (parseOptions.maxTokens): the @gl_introduced filter parses with it too, so no longer document gets through. */
  maxTokens: number;
};

/**
 * POST /api/graphql's side of guardOperation and of @gl_introduced (graphql-ws and ActionCable do
 * both themselves): Apollo reads `request.query` only after requestDidStart, so a document tagging
 * newer fields is swapped there for the one without them, which Apollo then parses, validates and
 * caches; the answer gets null where they were.
 */
export function operationGuardPlugin({ schema, limits, maxTokens }: OperationGuardPluginOptions): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart({ request }) {
      const stripped = typeof request.query === 'string' ? stripIntroducedFields(request.query, { maxTokens }) : null;
      if (stripped) {
        // An automatic persisted query names the client's text by its hash: Apollo compares it with the text it
        // runs, so a hash that matched the client's text is carried over to the filtered one.
        const persisted = request.extensions?.persistedQuery as { sha256Hash?: unknown } | undefined;
        if (persisted && persisted.sha256Hash === sha256(request.query!)) persisted.sha256Hash = sha256(stripped.query);
        request.query = stripped.query;
      }
      return {
        async didResolveOperation({ request, document, operation, contextValue }) {
          if (!operation) return;
          guardOperation({ schema, document, operation, variables: request.variables, viewer: contextValue.viewer, limits, stripped });
          // Its input checked as any operation's, a subscription is refused: over HTTP there is nothing to stream it on.
          if (operation.operation === 'subscription')
            throw new GraphQLError(
              'Subscriptions are served over WebSockets: graphql-ws (graphql-transport-ws) at /api/graphql, or ActionCable at /-/cable',
              { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } },
            );
        },
        async willSendResponse({ response, operation }) {
          if (stripped && operation && response.body.kind === 'single')
            stripped.restore(response.body.singleResult.data, { schema, operationName: operation.name?.value });
        },
      };
    },
  };
}

const GRAPHQL_CODES: Record<AppErrorCode, string> = {
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  RATE_LIMITED: 'RATE_LIMITED',
  CONFLICT: 'CONFLICT',
  UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  INTERNAL: 'INTERNAL_SERVER_ERROR',
};

// Codes that graphql-js, Apollo and our own GraphQLErrors set deliberately, with messages fit to show.
const PASS_THROUGH_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'RATE_LIMITED',
  // The sockets' own answer when a dependency (the database, Redis, GitLab) did not answer a re-check: its message names it.
  'SERVICE_UNAVAILABLE',
]);

/** Every `extensions.code` the error formatter can answer with (metrics label errors by it). */
export const GRAPHQL_ERROR_CODES: ReadonlySet<string> = new Set([
  ...PASS_THROUGH_CODES,
  ...Object.values(GRAPHQL_CODES),
  'SERVICE_UNAVAILABLE',
]);

function isDeliberate(error: unknown, formattedCode: unknown): boolean {
  const original = unwrapResolverError(error);
  if (isAppError(original)) return original.code !== 'INTERNAL';
  return (typeof formattedCode === 'string' && PASS_THROUGH_CODES.has(formattedCode)) || isRequestRefusal(error, formattedCode);
}

/**
 * Apollo's own refusal of a request before it runs, with an HTTP 4xx and no code of its own (a persisted
 * query's hash that names another text, an unsupported persisted-query version): the client's mistake, BAD_REQUEST.
 */
function isRequestRefusal(error: unknown, formattedCode: unknown): boolean {
  // Apollo gives every error without a code INTERNAL_SERVER_ERROR.
  if (formattedCode !== undefined && formattedCode !== 'INTERNAL_SERVER_ERROR') return false;
  if (!(error instanceof GraphQLError) || error.originalError || error.path) return false;
  const status = (error.extensions?.http as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** Logs, with the request id, every error that formatError will mask. */
export function errorLoggingPlugin(logger: Logger): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didEncounterErrors({ errors, contextValue, operationName }) {
          for (const error of errors) {
            // A dependency known to be down was logged once, where it was seen to stop answering.
            if (isDeliberate(error, error.extensions?.code) || refusedUnsent(unwrapResolverError(error))) continue;
            logger.error(
              {
                event: 'graphql_internal_error',
                requestId: contextValue.requestId,
                operationName,
                path: error.path,
                err: unwrapResolverError(error),
              },
              'GraphQL request failed',
            );
          }
        },
      };
    },
  };
}

/**
 * The one place errors are shaped for GraphQL clients: our AppErrors by their code and safe message,
 * deliberate GraphQL errors as they are, anything else masked (errorLoggingPlugin logs it).
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  const unavailable = unavailableMessage(original);
  if (unavailable) {
    return {
      message: unavailable,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: 'SERVICE_UNAVAILABLE' },
    };
  }
  if (!isDeliberate(error, formatted.extensions?.code)) {
    return {
      message: 'Internal server error',
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    };
  }
  if (isAppError(original)) {
    return {
      message: original.userMessage,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: GRAPHQL_CODES[original.code], ...(original.field ? { field: original.field } : {}) },
    };
  }
  if (isRequestRefusal(error, formatted.extensions?.code)) return { message: formatted.message, extensions: { code: 'BAD_REQUEST' } };
  const field = formatted.extensions?.field;
  return { ...formatted, extensions: { code: formatted.extensions?.code, ...(typeof field === 'string' ? { field } : {}) } };
}
