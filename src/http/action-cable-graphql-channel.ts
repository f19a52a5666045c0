import {
  execute,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  Kind,
  parse,
  specifiedRules,
  subscribe,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from 'graphql';
import { stripIntroducedFields, type StrippedDocument } from '../graphql/gl-introduced';
import type { Logger } from '../logger';

/** What GraphqlChannel transmits for one identifier, as GitLab's `GraphqlChannel` does. */
export type GraphqlChannelMessage = {
  result: { data?: unknown; errors?: GraphQLFormattedError[]; extensions?: unknown };
  /** True while a subscription may send more results; false on the last message. */
  more: boolean;
};

/** Apollo's `formatError` signature, so the schema's usual formatter plugs in unchanged. */
export type FormatGraphqlError = (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;

export type GraphqlChannelOptions = {
  schema: GraphQLSchema;
  /** The channel's identifier params: `query`, `variables` (JSON string or object), `operationName`. */
  params: Record<string, unknown>;
  /** Called once, lazily, so a throwing context factory is reported like any other error. */
  createContext(): unknown;
  /** Each message in turn. A subscription's first comes once its event source listens (the subscribe resolver returned). */
  transmit(message: GraphqlChannelMessage): void;
  logger: Logger;
  /** Default: errors as graphql-js formats them. */
  formatError?: FormatGraphqlError;
  /** Added to graphql-js's specified rules (e.g. a depth limit). Default: none. */
  validationRules?: readonly ValidationRule[];
  /** graphql-js parse option: documents over this many tokens are refused. Default: no limit. */
  maxTokens?: number;
  /** Throws a GraphQLError to refuse a validated operation before its variables are coerced. Default: none. */
  checkOperation?(operation: CheckedOperation): void;
  /** Whether a subscription's next event may still go out; false ends it (the transport closes the connection). */
  admitEvent?(): Promise<boolean>;
};

/**
 * What checkOperation is given: the parsed document, the operation chosen, the raw variables, and
 * what @gl_introduced stripped from the document before it was parsed (guardOperation counts it).
 */
export type CheckedOperation = {
  document: DocumentNode;
  operation: OperationDefinitionNode;
  variables: Record<string, unknown>;
  stripped: StrippedDocument | null;
};

/** A running GraphqlChannel subscription; `stop()` is safe to call at any time and more than once. */
export type GraphqlChannelRun = {
  stop(): void;
  /** Settles when nothing more will be transmitted; never rejects. */
  done: Promise<void>;
};

/**
 * Executes the operation in a GraphqlChannel subscription: queries and mutations answer once with
 * `more: false`; subscriptions answer `{data: {<field>: null}}` at once (as graphql-ruby does), then
 * each event with `more: true`. Every failure ends the run with an errors result and `more: false`.
 */
export function startGraphqlChannel(options: GraphqlChannelOptions): GraphqlChannelRun {
  let stopped = false;
  let iterator: AsyncIterator<ExecutionResult> | undefined;

  const transmit = (message: GraphqlChannelMessage) => {
    if (!stopped) options.transmit(message);
  };
  let restore = (result: ExecutionResult) => result;
  const finish = (result: ExecutionResult) => transmit({ result: toJson(restore(result), options), more: false });

  // Not awaited: an async generator's return() waits for its pending await, maybe for ever.
  const closeIterator = () => {
    iterator?.return?.().catch((error: unknown) => options.logger.warn({ event: 'cable_iterator_return_failed', err: error }));
  };
  const stop = () => {
    if (stopped) return;
    stopped = true;
    closeIterator();
  };

  const run = async () => {
    const prepared = prepare(options);
    if (!('args' in prepared)) return finish(prepared);
    const { args, operation, stripped } = prepared;
    if (stripped) {
      // Null where the fields @gl_introduced stripped were, as GitLab answers them.
      restore = (result) => {
        stripped.restore(result.data, { schema: options.schema, operationName: operation.name?.value });
        return result;
      };
    }
    if (operation.operation !== 'subscription') return finish(await execute(args));

    const stream = await subscribe(args);
    if (!isEventStream(stream)) return finish(stream);
    iterator = stream;
    if (stopped) return closeIterator();

    const nothing = { data: { [responseKey(operation, args.document)]: null } };
    transmit({ result: nothing, more: true });
    for (;;) {
      const next = await stream.next();
      if (stopped || next.done) break;
      if (options.admitEvent && !(await options.admitEvent())) return closeIterator();
      transmit({ result: toJson(restore(next.value), options), more: true });
    }
    transmit({ result: nothing, more: false });
  };

  const done = run().catch((error: unknown) => {
    // graphql-js reports resolver errors in results; what lands here is a bug or a broken event source.
    options.logger.error({ event: 'cable_operation_crashed', err: error }, 'GraphqlChannel operation failed');
    transmit({ result: { errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] }, more: false });
  });
  return { stop, done };
}

type PreparedOperation = { args: ExecutionArgs; operation: OperationDefinitionNode; stripped: StrippedDocument | null };

// The request errors carry the codes Apollo gives them on /api/graphql, so formatError treats both alike.
function prepare(options: GraphqlChannelOptions): PreparedOperation | ExecutionResult {
  const request = readRequest(options.params);
  if (request instanceof GraphQLError) return { errors: [request] };
  const stripped = stripIntroducedFields(request.query, { maxTokens: options.maxTokens });
  let document: DocumentNode;
  try {
    document = parse(stripped?.query ?? request.query, options.maxTokens ? { maxTokens: options.maxTokens } : undefined);
  } catch (error) {
    return { errors: [withCode(error as GraphQLError, 'GRAPHQL_PARSE_FAILED')] };
  }
  const validationErrors = validate(options.schema, document, [...specifiedRules, ...(options.validationRules ?? [])]);
  if (validationErrors.length > 0) return { errors: validationErrors.map((error) => withCode(error, 'GRAPHQL_VALIDATION_FAILED')) };
  const operation = getOperationAST(document, request.operationName);
  if (!operation) {
    const message = request.operationName
      ? `Unknown operation named "${request.operationName}".`
      : 'Must provide operation name if query contains multiple operations.';
    return { errors: [new GraphQLError(message, { extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } })] };
  }
  if (options.checkOperation) {
    try {
      options.checkOperation({ document, operation, variables: request.variables, stripped });
    } catch (error) {
      if (error instanceof GraphQLError) return { errors: [error] };
      throw error;
    }
  }
  const coerced = getVariableValues(options.schema, operation.variableDefinitions ?? [], request.variables, { maxErrors: 50 });
  if (coerced.errors) return { errors: coerced.errors.map((error) => withCode(error, 'BAD_USER_INPUT')) };
  const args = {
    schema: options.schema,
    document,
    variableValues: request.variables,
    operationName: request.operationName,
    contextValue: options.createContext(),
  };
  return { args, operation, stripped };
}

type GraphqlRequest = { query: string; variables: Record<string, unknown>; operationName: string | undefined };

// Mirrors GitLab's Gitlab::Graphql::Variables: a JSON string (what the language server sends), an object, or blank.
function readRequest(params: Record<string, unknown>): GraphqlRequest | GraphQLError {
  const { query, variables, operationName } = params;
  const badRequest = (message: string, code = 'BAD_REQUEST', field?: string) =>
    new GraphQLError(message, { extensions: { code, ...(field ? { field } : {}) } });
  if (typeof query !== 'string' || query.trim() === '') return badRequest('No query string was present');
  if (operationName != null && typeof operationName !== 'string') return badRequest('operationName must be a string');
  let parsed = variables;
  if (typeof variables === 'string') {
    if (variables.trim() === '') parsed = {};
    else {
      try {
        parsed = JSON.parse(variables);
      } catch (error) {
        return badRequest(`Variables are not valid JSON: ${(error as Error).message}`, 'BAD_USER_INPUT', 'variables');
      }
    }
  }
  parsed ??= {};
  if (typeof parsed !== 'object' || Array.isArray(parsed))
    return badRequest(`Unexpected parameter: ${JSON.stringify(variables)}`, 'BAD_USER_INPUT', 'variables');
  return { query, variables: parsed as Record<string, unknown>, operationName: operationName ?? undefined };
}

function withCode(error: GraphQLError, code: string): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...error.extensions, code },
  });
}

function toJson(result: ExecutionResult, options: GraphqlChannelOptions): GraphqlChannelMessage['result'] {
  const json: GraphqlChannelMessage['result'] = {};
  if ('data' in result) json.data = result.data;
  if (result.errors) json.errors = result.errors.map((error) => formatError(error, options));
  if (result.extensions) json.extensions = result.extensions;
  return json;
}

function formatError(error: GraphQLError, options: GraphqlChannelOptions): GraphQLFormattedError {
  const formatted = options.formatError ? options.formatError(error.toJSON(), error) : error.toJSON();
  // A masked error would otherwise leave no trace of what went wrong.
  if (formatted.extensions?.code === 'INTERNAL_SERVER_ERROR') {
    options.logger.error(
      { event: 'cable_operation_error', path: error.path, err: error.originalError ?? error },
      'GraphqlChannel operation error',
    );
  }
  return formatted;
}

// The key graphql-ruby puts in the initial result: the root field's alias or name.
function responseKey(operation: OperationDefinitionNode, document: DocumentNode): string {
  let selections = operation.selectionSet.selections;
  for (;;) {
    const [first] = selections;
    if (!first) return 'data';
    if (first.kind === Kind.FIELD) return first.alias?.value ?? first.name.value;
    if (first.kind === Kind.INLINE_FRAGMENT) selections = first.selectionSet.selections;
    else {
      const fragment = document.definitions.find(
        (definition) => definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === first.name.value,
      );
      if (fragment?.kind !== Kind.FRAGMENT_DEFINITION) return 'data';
      selections = fragment.selectionSet.selections;
    }
  }
}

function isEventStream(value: ExecutionResult | AsyncIterator<ExecutionResult>): value is AsyncIterator<ExecutionResult> {
  return typeof (value as AsyncIterator<unknown>).next === 'function';
}
