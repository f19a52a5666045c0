import { GraphQLError, type ValidationContext, type ValidationRule } from 'graphql';

/**
 * For socket transports: subscriptions and queries only. Mutations go through POST /api/graphql,
 * where token scopes and the cost limit are checked.
 */
export const noMutationsRule: ValidationRule = (context: ValidationContext) => ({
  OperationDefinition(node) {
    if (node.operation === 'mutation') {
      context.reportError(
        new GraphQLError('Mutations are not accepted over this socket: send them to POST /api/graphql', {
          nodes: [node],
          extensions: { code: 'FORBIDDEN' },
        }),
      );
    }
  },
});
