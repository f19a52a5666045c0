import {
  getVariableValues,
  GraphQLError,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { hasScope, SURFACE_SCOPES, type Viewer } from '../auth/viewer';
import { describeUnsafeJson, describeUnsafeText, findUnsafeJson, unsafeText } from '../validation';
import { depthLimitMessage } from './depth-limit';
import type { StrippedDocument } from './gl-introduced';
import { MAX_OPERATION_NODES, operationCost } from './operation-cost';

/** Mutations an `ai_features` token may run (GitLab allows that scope on the AI endpoints only). */
export const AI_MUTATIONS: ReadonlySet<string> = new Set([
  'aiAction',
  'duoUserFeedback',
  'deleteConversationThread',
  'codeSuggestionSessionStart',
  'codeSuggestionSessionUpdate',
  'codeSuggestionFeedback',
]);

export type OperationLimits = {
  /** Highest estimated cost (each field 1 unless it says otherwise). */
  maxComplexity: number;
  /** Deepest nesting of any JSON value in variables or inline arguments. */
  maxJsonDepth: number;
  /** Deepest nesting of fields. The depth rule checks it in validation; here it is checked again with what @gl_introduced stripped. */
  maxDepth: number;
};

export type GuardOperationOptions = {
  schema: GraphQLSchema;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  variables: Record<string, unknown> | null | undefined;
  viewer: Viewer | null;
  limits: OperationLimits;
  /** What @gl_introduced took out of the document before validation (gl-introduced.ts): it still counts. Default: nothing. */
  stripped?: StrippedDocument | null;
};

const badInput = (message: string, field?: string) =>
  new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', ...(field ? { field } : {}), http: { status: 400 } } });

/**
 * The checks every transport (POST /api/graphql, graphql-ws, ActionCable) runs on a parsed and
 * validated operation before executing it, in one place so that they cannot drift apart:
 * token scopes on every mutation field that would run (fragments included), the variables
 * (coerced before anything uses them; NUL bytes and JSON depth), inline string arguments, and
 * the cost limit, with the depth and cost of fields @gl_introduced stripped. Throws a GraphQLError
 * with the code clients branch on.
 */
export function guardOperation(options: GuardOperationOptions): void {
  const { schema, document, operation, viewer, limits } = options;
  const fragments = fragmentsOf(document);
  checkScopes(viewer, operation, fragments);

  // A variable's default value is written inline: the same rules as an argument's.
  for (const definition of operation.variableDefinitions ?? [])
    if (definition.defaultValue) checkValueNode(definition.defaultValue, `$${definition.variable.name.value}`, limits.maxJsonDepth);
  const variables = options.variables ?? {};
  const unsafe = findUnsafeJson(variables, { maxDepth: limits.maxJsonDepth });
  if (unsafe) throw badInput(`Variable "$${unsafe.path}" ${describeUnsafeJson(unsafe, limits.maxJsonDepth)}`, unsafe.path);
  // graphql-query-complexity coerces variables itself and throws a plain Error on bad ones: coerce first.
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables, { maxErrors: 1 });
  if (coerced.errors) {
    const [first] = coerced.errors;
    const name = /^Variable "\$([A-Za-z_][A-Za-z0-9_]*)"/.exec(first.message)?.[1];
    throw badInput(first.message, name);
  }
  checkInlineArguments(operation.selectionSet, fragments, limits.maxJsonDepth);

  const stripped = options.stripped?.limitsOf(operation.name?.value);
  if (stripped && stripped.depth > limits.maxDepth) throw badInput(depthLimitMessage(stripped.depth, limits.maxDepth));
  const complexity = operationCost({ schema, document, operationName: operation.name?.value, variables }) + (stripped?.cost ?? 0);
  if (complexity === Infinity) {
    throw badInput(
      `Query has more than ${MAX_OPERATION_NODES} fields and fragments once its fragments are expanded, which exceeds max complexity of ` +
        `${limits.maxComplexity}`,
    );
  }
  if (complexity > limits.maxComplexity) {
    throw new GraphQLError(`Query has complexity of ${complexity}, which exceeds max complexity of ${limits.maxComplexity}`, {
      extensions: { code: 'BAD_USER_INPUT', http: { status: 200 } },
    });
  }
}

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return fragments;
}

/** The root fields an operation would run, through fragment spreads and inline fragments. */
export function rootFieldNames(
  selectionSet: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  seen = new Set<string>(),
): string[] {
  const names: string[] = [];
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) names.push(selection.name.value);
    else if (selection.kind === Kind.INLINE_FRAGMENT) names.push(...rootFieldNames(selection.selectionSet, fragments, seen));
    else {
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (!fragment || seen.has(name)) continue;
      seen.add(name);
      names.push(...rootFieldNames(fragment.selectionSet, fragments, seen));
    }
  }
  return names;
}

/**
 * Queries that hand out a project's code as search results: they take the scopes REST's semantic search and file
 * reads take (`api`, `read_api`). An `ai_features` token reaches code only through chat, as on GitLab.
 */
export const CODE_READING_QUERIES: ReadonlySet<string> = new Set(['codebaseSearch']);

/** `read_api` tokens run no mutation; `ai_features` tokens only the AI ones and no code search; `api` everything. */
function checkScopes(
  viewer: Viewer | null,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): void {
  if (!viewer || hasScope(viewer, 'api')) return;
  const fields = rootFieldNames(operation.selectionSet, fragments).filter((name) => name !== '__typename');
  if (operation.operation === 'query') {
    const reading = fields.find((field) => CODE_READING_QUERIES.has(field));
    if (reading && !hasScope(viewer, ...SURFACE_SCOPES.rest_read)) {
      throw new GraphQLError(`Insufficient token scope: ${reading} needs a token with the api or read_api scope`, {
        extensions: { code: 'FORBIDDEN', http: { status: 403 } },
      });
    }
  }
  if (operation.operation !== 'mutation') return;
  if (hasScope(viewer, 'ai_features') && fields.every((field) => AI_MUTATIONS.has(field))) return;
  throw new GraphQLError('Insufficient token scope: mutations need a token with the api scope (or ai_features for AI actions)', {
    extensions: { code: 'FORBIDDEN', http: { status: 403 } },
  });
}

/** NUL bytes and over-deep objects written inline, named by the argument (and input field) that holds them. */
function checkInlineArguments(
  selectionSet: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  maxDepth: number,
): void {
  const visitedFragments = new Set<string>();
  const pending: SelectionSetNode[] = [selectionSet];
  while (pending.length > 0) {
    const current = pending.pop()!;
    for (const selection of current.selections) {
      if (selection.kind === Kind.FIELD) {
        for (const argument of selection.arguments ?? []) checkValueNode(argument.value, argument.name.value, maxDepth);
        if (selection.selectionSet) pending.push(selection.selectionSet);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) pending.push(selection.selectionSet);
      else if (!visitedFragments.has(selection.name.value)) {
        visitedFragments.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) pending.push(fragment.selectionSet);
      }
    }
  }
}

function checkValueNode(root: ValueNode, rootPath: string, maxDepth: number): void {
  const stack: Array<{ node: ValueNode; path: string; depth: number }> = [{ node: root, path: rootPath, depth: 0 }];
  while (stack.length > 0) {
    const { node, path, depth } = stack.pop()!;
    if (depth > maxDepth) throw badInput(`Argument "${rootPath}" is nested deeper than ${maxDepth} levels`, path);
    const problem = node.kind === Kind.STRING ? unsafeText(node.value) : null;
    if (problem) throw badInput(`Argument "${path}" ${describeUnsafeText(problem)}`, path);
    if (node.kind === Kind.LIST)
      node.values.forEach((value, index) => stack.push({ node: value, path: `${path}.${index}`, depth: depth + 1 }));
    if (node.kind === Kind.OBJECT)
      node.fields.forEach((field) => stack.push({ node: field.value, path: `${path}.${field.name.value}`, depth: depth + 1 }));
  }
}
