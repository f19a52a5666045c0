import type { ApolloServerPlugin } from '@apollo/server';
import { Kind, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { bounded, metrics } from '../metrics/registry';
import type { GraphQLContext } from './context';
import { GRAPHQL_ERROR_CODES } from './plugins';

/**
 * The operation's label: its first root field as the schema names it (`aiAction`, `currentUser`).
 * Client-chosen operation names are free text, so they are never labels.
 */
export function operationLabel(operation: OperationDefinitionNode | undefined | null, rootFields: ReadonlySet<string>): string {
  const first = operation?.selectionSet.selections.find((selection) => selection.kind === Kind.FIELD);
  if (!operation) return 'invalid';
  if (!first || first.kind !== Kind.FIELD) return 'other';
  if (first.name.value.startsWith('__')) return 'introspection';
  return bounded(first.name.value, rootFields);
}

/** Counts and times GraphQL operations over HTTP by type and root field, and their errors by extensions.code. */
export function metricsPlugin(schema: GraphQLSchema): ApolloServerPlugin<GraphQLContext> {
  const rootFields = new Set(
    [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((type) =>
      type ? Object.keys(type.getFields()) : [],
    ),
  );
  return {
    async requestDidStart() {
      const started = process.hrtime.bigint();
      return {
        async willSendResponse({ operation, response }) {
          const operationType = operation?.operation ?? 'invalid';
          const label = operationLabel(operation, rootFields);
          const errors = response.body.kind === 'single' ? (response.body.singleResult.errors ?? []) : [];
          for (const error of errors)
            metrics.graphqlErrors.inc({
              operation: label,
              code: bounded(typeof error.extensions?.code === 'string' ? error.extensions.code : '', GRAPHQL_ERROR_CODES),
            });
          metrics.graphqlRequests.inc({ operation_type: operationType, operation: label, outcome: errors.length > 0 ? 'error' : 'ok' });
          metrics.graphqlDuration.observe(
            { operation_type: operationType, operation: label },
            Number(process.hrtime.bigint() - started) / 1e9,
          );
        },
      };
    },
  };
}
