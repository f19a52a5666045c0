import {
  BREAK,
  GraphQLError,
  isInterfaceType,
  isObjectType,
  Kind,
  visit,
  type DocumentNode,
  type GraphQLSchema,
  type ValueNode,
} from 'graphql';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';

export type OperationCostInput = {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName: string | undefined;
  /** The request's variables as sent, already checked to coerce without errors (the cost analysis coerces them again). */
  variables: Record<string, unknown>;
};

/**
 * Fields and fragments the cost analysis walks, fragments expanded, before it gives up: a fan-out of
 * fragments (`fragment F0 on Query { ...F1 ...F1 }`, 16 deep) is 65,536 fields in a few hundred tokens.
 * The cost of such an operation is Infinity.
 */
export const MAX_OPERATION_NODES = 10_000;

/** Per schema, per parsed document: each operation's cost, for documents whose cost no variable can change. */
const costs = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, number>>>();
const costFunctions = new WeakMap<GraphQLSchema, boolean>();
const variableDirectives = new WeakMap<DocumentNode, boolean>();

/**
 * The estimated cost of an operation: each field 1 unless its `complexity` extension says otherwise.
 * Walking the document with the schema is most of a small request's GraphQL work, so the cost is kept
 * per parsed document (Apollo hands every request of one query the same parsed document) whenever
 * the variables cannot change it: no directive in the document (`@include`, `@skip`) takes a variable,
 * and the schema has no field whose cost is a function of its arguments. Otherwise it is computed on
 * every request. Infinity when the operation is bigger than MAX_OPERATION_NODES.
 */
export function operationCost(input: OperationCostInput): number {
  const compute = () => {
    try {
      return getComplexity({
        schema: input.schema,
        query: input.document,
        operationName: input.operationName,
        variables: input.variables,
        estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
        maxQueryNodes: MAX_OPERATION_NODES,
      });
    } catch (error) {
      // The analysis stops at its node limit with an error of its own: the operation is too big to cost.
      if (error instanceof GraphQLError && error.message.startsWith('Query exceeds the maximum allowed number of nodes')) return Infinity;
      throw error;
    }
  };
  if (costReadsVariables(input.schema, input.document)) return compute();
  let byDocument = costs.get(input.schema);
  if (!byDocument) costs.set(input.schema, (byDocument = new WeakMap<DocumentNode, Map<string, number>>()));
  let byOperation = byDocument.get(input.document);
  if (!byOperation) byDocument.set(input.document, (byOperation = new Map<string, number>()));
  const key = input.operationName ?? '';
  let cost = byOperation.get(key);
  if (cost === undefined) {
    cost = compute();
    byOperation.set(key, cost);
  }
  return cost;
}

function costReadsVariables(schema: GraphQLSchema, document: DocumentNode): boolean {
  return hasCostFunctions(schema) || hasVariableDirectives(document);
}

/** Whether any field's cost is a function (of its arguments, which variables may carry). */
function hasCostFunctions(schema: GraphQLSchema): boolean {
  let found = costFunctions.get(schema);
  if (found === undefined) {
    found = Object.values(schema.getTypeMap()).some(
      (type) =>
        (isObjectType(type) || isInterfaceType(type)) &&
        Object.values(type.getFields()).some((field) => typeof field.extensions?.complexity === 'function'),
    );
    costFunctions.set(schema, found);
  }
  return found;
}

/** Whether a directive anywhere in the document (`@include(if: $x)`, `@skip(if: $x)`) takes a variable. */
function hasVariableDirectives(document: DocumentNode): boolean {
  let found = variableDirectives.get(document);
  if (found === undefined) {
    found = false;
    visit(document, {
      Directive(node) {
        if ((node.arguments ?? []).some((argument) => holdsVariable(argument.value))) {
          found = true;
          return BREAK;
        }
        return undefined;
      },
    });
    variableDirectives.set(document, found);
  }
  return found;
}

function holdsVariable(value: ValueNode): boolean {
  if (value.kind === Kind.VARIABLE) return true;
  if (value.kind === Kind.LIST) return value.values.some(holdsVariable);
  if (value.kind === Kind.OBJECT) return value.fields.some((field) => holdsVariable(field.value));
  return false;
}
