import {
  Kind,
  validate,
  visit,
  type DefinitionNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
} from 'graphql';
import { GITLAB_VERSION } from '../instance';
import { parseVersion } from './gl-introduced';

/** One top-level field of an operation and who answers it. */
export type RootField = { node: FieldNode; responseKey: string; owner: 'ours' | 'gitlab' | 'either' };

/**
 * Who answers an operation in connected mode:
 * - `ours`: every top-level field is one this service answers whole (or the document is not ours to route:
 *   no operation found, a subscription);
 * - `gitlab`: no top-level field is;
 * - `mixed`: some of each (`fields`, in the operation's order).
 */
export type OperationOwner =
  { owner: 'ours' } | { owner: 'gitlab' } | { owner: 'mixed'; operation: OperationDefinitionNode; fields: RootField[] };

export type OperationOwnerOptions = {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  /** Top-level fields GitLab answers in connected mode although our schema has them (`metadata`: GitLab's version). */
  gitlabFields?: ReadonlySet<string>;
  /** More top-level fields than this in an operation that is not wholly ours: refused (each is validated on its own). Default 100. */
  maxRootFields?: number;
};

/** An operation too wide to be split field by field. */
export class TooManyRootFieldsError extends Error {
  constructor(readonly count: number) {
    super(`operation has ${count} top-level fields`);
    this.name = 'TooManyRootFieldsError';
  }
}

/**
 * Decides who answers `document` by walking its operation's top-level fields against our schema. A
 * top-level field is ours when it, with its whole sub-selection, its arguments and the variables and
 * fragments it uses, is valid against our schema: `project(fullPath:) { name }` is ours,
 * `project(fullPath:) { mergeRequests { ... } }` is GitLab's though `project` is a field of ours, since
 * only GitLab can answer all of it. `__typename` goes with either side.
 */
export function operationOwner(options: OperationOwnerOptions): OperationOwner {
  const { schema, document } = options;
  const operation = findOperation(document, options.operationName);
  if (!operation || operation.operation === 'subscription') return { owner: 'ours' };
  const gitlabFields = options.gitlabFields ?? new Set<string>();
  const roots = rootFields(document, operation);
  // Fields tagged @gl_introduced above our version are answered null by us (src/graphql/gl-introduced.ts), not refused.
  const valid = (candidate: DocumentNode) => validate(schema, withoutNewerFields(candidate)).length === 0;
  // The usual case, a Duo operation: one validation of the whole document says it is ours.
  if (!roots.some((root) => gitlabFields.has(root.name.value)) && valid(document)) return { owner: 'ours' };
  if (roots.length > (options.maxRootFields ?? 100)) throw new TooManyRootFieldsError(roots.length);
  const fields: RootField[] = roots.map((node) => ({
    node,
    responseKey: node.alias?.value ?? node.name.value,
    owner:
      node.name.value === '__typename'
        ? 'either'
        : gitlabFields.has(node.name.value)
          ? 'gitlab'
          : valid(subOperation(document, operation, [node]))
            ? 'ours'
            : 'gitlab',
  }));
  // Two selections under one response key are merged into one answer: one side must answer both, and only GitLab can.
  const gitlabKeys = new Set(fields.filter((field) => field.owner === 'gitlab').map((field) => field.responseKey));
  for (const field of fields) if (gitlabKeys.has(field.responseKey)) field.owner = 'gitlab';
  const ours = fields.some((field) => field.owner === 'ours');
  const gitlab = fields.some((field) => field.owner === 'gitlab');
  if (ours && gitlab) return { owner: 'mixed', operation, fields };
  return gitlab ? { owner: 'gitlab' } : { owner: 'ours' };
}

const TYPENAME: FieldNode = { kind: Kind.FIELD, name: { kind: Kind.NAME, value: '__typename' } };

/** `document` without the selections tagged `@gl_introduced(version:)` above the version we report. */
function withoutNewerFields(document: DocumentNode): DocumentNode {
  const ours = parseVersion(GITLAB_VERSION)!;
  const isNewer = (node: { directives?: readonly { name: { value: string }; arguments?: readonly unknown[] }[] }) =>
    (node.directives ?? []).some((directive) => {
      if (directive.name.value !== 'gl_introduced') return false;
      const argument = (directive.arguments ?? []).find(
        (each): each is { name: { value: string }; value: { kind: string; value: string } } =>
          (each as { name: { value: string } }).name.value === 'version',
      );
      const version = argument?.value.kind === Kind.STRING ? parseVersion(argument.value.value) : null;
      return version !== null && (version[0] - ours[0] || version[1] - ours[1] || version[2] - ours[2]) > 0;
    });
  return visit(document, {
    Field: (node) => (isNewer(node) ? null : undefined),
    InlineFragment: (node) => (isNewer(node) ? null : undefined),
    // A selection left empty keeps a field that is valid anywhere, as the strip's placeholder does.
    SelectionSet: { leave: (node) => (node.selections.length === 0 ? { ...node, selections: [TYPENAME] } : undefined) },
  });
}

/** The operation `operationName` names, or the only one; null when there is no such single operation. */
export function findOperation(document: DocumentNode, operationName?: string | null): OperationDefinitionNode | null {
  const operations = document.definitions.filter((definition): definition is OperationDefinitionNode => {
    return definition.kind === Kind.OPERATION_DEFINITION;
  });
  if (operationName) return operations.find((operation) => operation.name?.value === operationName) ?? null;
  return operations.length === 1 ? operations[0] : null;
}

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return fragments;
}

/** The fields an operation selects at its root, through fragments spread or inlined there. */
function rootFields(document: DocumentNode, operation: OperationDefinitionNode): FieldNode[] {
  const fragments = fragmentsOf(document);
  const fields: FieldNode[] = [];
  const walk = (selections: readonly SelectionNode[], visited: Set<string>) => {
    for (const selection of selections) {
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) walk(selection.selectionSet.selections, visited);
      else {
        const fragment = fragments.get(selection.name.value);
        if (!fragment || visited.has(fragment.name.value)) continue;
        walk(fragment.selectionSet.selections, new Set([...visited, fragment.name.value]));
      }
    }
  };
  walk(operation.selectionSet.selections, new Set());
  return fields;
}

/** Variable and fragment names used under `nodes`, fragments followed. */
function usedNames(nodes: readonly FieldNode[], fragments: Map<string, FragmentDefinitionNode>) {
  const variables = new Set<string>();
  const fragmentNames = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    const record = node as { kind?: string; name?: { value: string } };
    if (record.kind === Kind.VARIABLE && record.name) variables.add(record.name.value);
    if (record.kind === Kind.FRAGMENT_SPREAD && record.name && !fragmentNames.has(record.name.value)) {
      fragmentNames.add(record.name.value);
      visit(fragments.get(record.name.value));
    }
    for (const [key, value] of Object.entries(node)) if (key !== 'loc' && value && typeof value === 'object') visit(value);
  };
  visit(nodes);
  return { variables, fragmentNames };
}

/**
 * The operation with only `fields` at its root, the variables and fragments they use and no others
 * (GraphQL refuses unused ones): a document one side can answer on its own.
 */
export function subOperation(document: DocumentNode, operation: OperationDefinitionNode, fields: readonly FieldNode[]): DocumentNode {
  const fragments = fragmentsOf(document);
  const used = usedNames(fields, fragments);
  const definitions: DefinitionNode[] = [
    {
      ...operation,
      variableDefinitions: operation.variableDefinitions?.filter((definition) => used.variables.has(definition.variable.name.value)),
      selectionSet: { kind: Kind.SELECTION_SET, selections: fields },
    },
    ...[...fragments.values()].filter((fragment) => used.fragmentNames.has(fragment.name.value)),
  ];
  return { kind: Kind.DOCUMENT, definitions };
}

/** The variables `document`'s operation declares, taken from `variables`. */
export function variablesFor(document: DocumentNode, variables: Record<string, unknown> | undefined): Record<string, unknown> {
  const names = new Set<string>();
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    for (const variable of definition.variableDefinitions ?? []) names.add(variable.variable.name.value);
  }
  return Object.fromEntries(Object.entries(variables ?? {}).filter(([name]) => names.has(name)));
}
