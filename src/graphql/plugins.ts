import type { ApolloServerPlugin } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, Kind, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';
import { hasScope } from '../auth/viewer';
import { isAppError, type AppErrorCode } from '../errors';
import type { Logger } from '../logger';
import type { GraphQLContext } from './context';

/** Mutations an `ai_features` token may run (GitLab allows that scope on the AI endpoints only). */
export const AI_MUTATIONS: ReadonlySet<string> = new Set([
  'aiAction',
  'duoUserFeedback',
  'deleteConversationThread',
  'codeSuggestionSessionStart',
  'codeSuggestionSessionUpdate',
  'codeSuggestionFeedback',
]);

/** Refuses mutations to `read_api` tokens, and non-AI mutations to `ai_features` tokens. */
export function scopePlugin(): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, contextValue }) {
          const viewer = contextValue.viewer;
          if (!viewer || operation?.operation !== 'mutation') return;
          if (hasScope(viewer, 'api')) return;
          const fields = operation.selectionSet.selections.flatMap((selection) => (selection.kind === Kind.FIELD ? [selection.name.value] : []));
          if (hasScope(viewer, 'ai_features') && fields.every((field) => AI_MUTATIONS.has(field))) return;
          throw new GraphQLError('Insufficient token scope: mutations need a token with the api scope (or ai_features for AI actions)', {
            extensions: { code: 'FORBIDDEN', http: { status: 403 } },
          });
        },
      };
    },
  };
}

/** Refuses operations whose estimated cost exceeds maxComplexity (each field costs 1 unless it says otherwise). */
export function complexityPlugin(schema: GraphQLSchema, maxComplexity: number): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document }) {
          const complexity = getComplexity({
            schema,
            operationName: request.operationName,
            query: document,
            variables: request.variables,
            estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
          });
          if (complexity > maxComplexity) {
            throw new GraphQLError(`Query has complexity of ${complexity}, which exceeds max complexity of ${maxComplexity}`, {
              extensions: { code: 'BAD_USER_INPUT', http: { status: 200 } },
            });
          }
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
]);

function isDeliberate(error: unknown, formattedCode: unknown): boolean {
  const original = unwrapResolverError(error);
  if (isAppError(original)) return original.code !== 'INTERNAL';
  return typeof formattedCode === 'string' && PASS_THROUGH_CODES.has(formattedCode);
}

/** Logs, with the request id, every error that formatError will mask. */
export function errorLoggingPlugin(logger: Logger): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didEncounterErrors({ errors, contextValue, operationName }) {
          for (const error of errors) {
            if (isDeliberate(error, error.extensions?.code)) continue;
            logger.error(
              { event: 'graphql_internal_error', requestId: contextValue.requestId, operationName, path: error.path, err: unwrapResolverError(error) },
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
  if (!isDeliberate(error, formatted.extensions?.code)) {
    return { message: 'Internal server error', locations: formatted.locations, path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  }
  if (isAppError(original)) {
    return {
      message: original.userMessage,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: GRAPHQL_CODES[original.code], ...(original.field ? { field: original.field } : {}) },
    };
  }
  return { ...formatted, extensions: { code: formatted.extensions?.code } };
}
