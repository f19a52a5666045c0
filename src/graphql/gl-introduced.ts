import {
  DirectiveLocation,
  getNamedType,
  GraphQLDirective,
  GraphQLNonNull,
  GraphQLString,
  isAbstractType,
  isInterfaceType,
  isObjectType,
  Kind,
  parse,
  TokenKind,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type InlineFragmentNode,
  type NamedTypeNode,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
  type Token,
  type ValueNode,
} from 'graphql';
import { GITLAB_VERSION } from '../instance';
import { LruCache } from '../lru-cache';
import { depthMeter } from './depth-limit';

// GitLab's @gl_introduced (Gitlab::Graphql::VersionFilter): clients tag what a newer GitLab added,
// and send the same document to every version. A node tagged with a version above ours is taken
// out before validation, as if the client had not asked for it, and answered with null.
//
// The document is filtered as text: the stripped nodes are overwritten with spaces (line breaks
// kept), so every transport parses, validates and caches the result as it would the client's
// text, and every error still points at the client's line and column. Stripping has side effects
// GitLab suppresses among the validation errors; here they never arise: variable definitions and
// fragments used only inside stripped nodes are blanked too, and a selection set left empty gets
// one aliased `__typename`, removed again from the answer.
//
// What is stripped still counts: each operation keeps the depth it had as sent and the cost of its
// stripped fields, which guardOperation adds to the limits (GitLab restores the document before
// analysis for the same reason). The work is one parse (with the transport's token limit) and a
// few walks, each fragment walked once.
//
// Two differences from GitLab: a tagged field that our schema does have is answered with null too
// (GitLab would run it), and a variable used only in a directive inside a stripped node is not
// reported unused (GitLab reports it).

const DIRECTIVE_NAME = 'gl_introduced';

/** `directive @gl_introduced(version: String!) on FIELD | INLINE_FRAGMENT`, as GitLab's schema declares it. */
export const GlIntroducedDirective = new GraphQLDirective({
  name: DIRECTIVE_NAME,
  description: 'Marks a field as introduced in a specific version. Fields with a version higher than the current one will return null.',
  locations: [DirectiveLocation.FIELD, DirectiveLocation.INLINE_FRAGMENT],
  args: { version: { type: new GraphQLNonNull(GraphQLString), description: "The version when this field was introduced (e.g. '18.1.0')" } },
});

type Version = readonly [major: number, minor: number, patch: number];

const VERSION = /(\d+)\.(\d+)\.(\d+)/;
const MAX_VERSION_LENGTH = 128;

/**
 * A version as GitLab reads one (Gitlab::VersionInfo.parse): the first `major.minor.patch` in the
 * text, whatever surrounds it (`v18.1.0-pre` is 18.1.0). Null when there is none, when the text is
 * over 128 characters or the version is 0.0.0: GitLab strips nothing for such a tag.
 */
export function parseVersion(text: string): Version | null {
  if (text.length > MAX_VERSION_LENGTH) return null;
  const match = VERSION.exec(text);
  if (!match) return null;
  const version: Version = [Number(match[1]), Number(match[2]), Number(match[3])];
  return version[0] + version[1] + version[2] > 0 ? version : null;
}

const compareVersions = (left: Version, right: Version) => left[0] - right[0] || left[1] - right[1] || left[2] - right[2];

/** The depth an operation has as sent and the estimated cost (1 a field) of what was stripped from it. */
export type StrippedLimits = { depth: number; cost: number };

export type StripIntroducedOptions = {
  /** The version nodes are compared with. Default: GITLAB_VERSION, the one we report. */
  version?: string;
  /** graphql-js parse option: a longer document is left as it is, for the transport to refuse. Default: no limit. */
  maxTokens?: number;
};

/** What stripIntroducedFields made of a document: the text to parse instead, and what to count and answer for it. */
export type StrippedDocument = {
  /** The client's text with the stripped nodes blanked out: same length, same lines and columns. */
  readonly query: string;
  /** Per operation, by name (none: the only one); undefined when the document has no such operation. */
  limitsOf(operationName: string | null | undefined): StrippedLimits | undefined;
  /**
   * Puts null where stripped fields were, as GitLab answers them, and takes out the placeholders, in
   * `data` of the named operation's result (changed in place). The schema tells which fragments apply.
   */
  restore(data: unknown, options: { schema: GraphQLSchema; operationName: string | null | undefined }): void;
};

// Documents are kept only while small: what clients send repeatedly (the language server's getUser)
// then costs one parse, which the transports' own caches (Apollo's) do not pay again either.
const CACHED_DOCUMENTS = 64;
const MAX_CACHED_LENGTH = 16 * 1024;
const caches = new Map<string, LruCache<string, StrippedDocument | null>>();

/**
 * The document to parse in place of `query` when it tags nodes with a version above ours; null when
 * nothing is stripped (or the text does not parse: the transport then reports that itself).
 */
export function stripIntroducedFields(query: string, options: StripIntroducedOptions = {}): StrippedDocument | null {
  if (!query.includes(DIRECTIVE_NAME)) return null;
  const version = options.version ?? GITLAB_VERSION;
  const cacheKey = `${version}/${options.maxTokens ?? ''}`;
  let cache = caches.get(cacheKey);
  if (!cache) caches.set(cacheKey, (cache = new LruCache(CACHED_DOCUMENTS)));
  let stripped = cache.get(query);
  if (stripped === undefined) {
    const current = parseVersion(version);
    if (!current) throw new Error(`not a version: ${version}`);
    stripped = strip(query, { current, maxTokens: options.maxTokens });
    if (query.length <= MAX_CACHED_LENGTH) cache.set(query, stripped);
  }
  return stripped;
}

/** A parsed document and the nodes tagged with a version above ours (the outermost ones). */
type Tagged = {
  document: DocumentNode;
  operations: readonly OperationDefinitionNode[];
  fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  stripped: ReadonlySet<SelectionNode>;
};

function strip(query: string, options: { current: Version; maxTokens: number | undefined }): StrippedDocument | null {
  let document: DocumentNode;
  try {
    document = parse(query, options.maxTokens ? { maxTokens: options.maxTokens } : undefined);
  } catch {
    return null;
  }
  const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const { stripped, emptied } = findTagged(document, options.current);
  if (stripped.size === 0 || operations.length === 0) return null;
  const tagged: Tagged = { document, operations, fragments, stripped };

  let placeholder = '_glIntroduced';
  for (let suffix = 1; query.includes(placeholder); suffix += 1) placeholder = `_glIntroduced${suffix}`;
  const text = blankOut(query, { tagged, emptied, placeholder });
  if (text === null) return null;

  const depthOf = depthMeter(document);
  const costOf = strippedCosts(tagged);
  const limits = new Map(
    operations.map((operation) => [
      operation.name?.value ?? '',
      { operation, depth: depthOf(operation.selectionSet), cost: costOf(operation.selectionSet) },
    ]),
  );
  // As getOperationAST: without a name, the document's only operation.
  const find = (operationName: string | null | undefined) =>
    operationName ? limits.get(operationName) : operations.length === 1 ? limits.values().next().value : undefined;
  const restore = answerer(tagged, placeholder);
  return {
    query: text,
    limitsOf: (operationName) => {
      const found = find(operationName);
      return found && { depth: found.depth, cost: found.cost };
    },
    restore: (data, { schema, operationName }) => {
      const operation = find(operationName)?.operation;
      if (operation && isRecord(data)) restore(data, { schema, operation });
    },
  };
}

function introducedAfter(node: FieldNode | InlineFragmentNode, current: Version): boolean {
  const directive = node.directives?.find((candidate) => candidate.name.value === DIRECTIVE_NAME);
  const value = directive?.arguments?.find((argument) => argument.name.value === 'version')?.value;
  // Validation has not run yet: the argument may be any literal (or a variable), and only a string names a version.
  if (value?.kind !== Kind.STRING) return false;
  const introduced = parseVersion(value.value);
  return introduced !== null && compareVersions(introduced, current) > 0;
}

/** A selection set whose every selection is stripped, and the fragment it belongs to (null: an operation). */
type Emptied = { selectionSet: SelectionSetNode; fragment: string | null };

/** The tagged nodes above `current`, outermost only, in operations and fragments, and the selection sets they empty. */
function findTagged(document: DocumentNode, current: Version): { stripped: Set<SelectionNode>; emptied: Emptied[] } {
  const stripped = new Set<SelectionNode>();
  const emptied: Emptied[] = [];
  const visit = (selectionSet: SelectionSetNode, fragment: string | null) => {
    let kept = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind !== Kind.FRAGMENT_SPREAD && introducedAfter(selection, current)) {
        stripped.add(selection);
        continue;
      }
      kept += 1;
      if (selection.kind !== Kind.FRAGMENT_SPREAD && selection.selectionSet) visit(selection.selectionSet, fragment);
    }
    if (kept === 0) emptied.push({ selectionSet, fragment });
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) visit(definition.selectionSet, null);
    else if (definition.kind === Kind.FRAGMENT_DEFINITION) visit(definition.selectionSet, definition.name.value);
  }
  return { stripped, emptied };
}

/**
 * The client's text without the stripped nodes, and without what only they used: variable
 * definitions (with the parentheses, when none is left) and fragments. A selection set left empty
 * gets `<placeholder>:__typename` over its first stripped node. Null when that does not fit.
 */
function blankOut(query: string, options: { tagged: Tagged; emptied: readonly Emptied[]; placeholder: string }): string | null {
  const { operations, fragments, stripped } = options.tagged;
  const onlyStripped = strippedUses(options.tagged);
  const kept = keptUses(options.tagged);
  const reached = new Set(kept.flatMap((uses) => [...uses.fragments]));
  const blankedFragments = new Set([...onlyStripped.fragments].filter((name) => !reached.has(name)));

  const text = query.split('');
  const blank = (location: { start: number; end: number }) => {
    for (let index = location.start; index < location.end; index += 1) if (text[index] !== '\n' && text[index] !== '\r') text[index] = ' ';
  };
  stripped.forEach((node) => blank(node.loc!));
  blankedFragments.forEach((name) => blank(fragments.get(name)!.loc!));
  operations.forEach((operation, index) => {
    const definitions = operation.variableDefinitions ?? [];
    const unused = definitions.filter((definition) => {
      const name = definition.variable.name.value;
      return onlyStripped.variables.has(name) && !kept[index].variables.has(name);
    });
    unused.forEach((definition) => blank(definition.loc!));
    // `query q()` does not parse: without any definition left, the parentheses go too.
    if (unused.length > 0 && unused.length === definitions.length) {
      const open = significant(definitions[0].loc!.startToken, 'prev');
      const close = significant(definitions[definitions.length - 1].loc!.endToken, 'next');
      if (open?.kind === TokenKind.PAREN_L) blank(open);
      if (close?.kind === TokenKind.PAREN_R) blank(close);
    }
  });
  // `{ }` does not parse either.
  const field = `${options.placeholder}:__typename`;
  for (const { selectionSet, fragment } of options.emptied) {
    if (fragment !== null && blankedFragments.has(fragment)) continue;
    const { start, end } = selectionSet.selections[0].loc!;
    // A tagged node is longer (its directive alone is 30 characters), and a space must follow.
    if (field.length >= end - start) return null;
    text.splice(start, field.length, ...field);
  }
  return text.join('');
}

function variablesIn(value: ValueNode, into: Set<string>): void {
  if (value.kind === Kind.VARIABLE) into.add(value.name.value);
  else if (value.kind === Kind.LIST) value.values.forEach((item) => variablesIn(item, into));
  else if (value.kind === Kind.OBJECT) value.fields.forEach((field) => variablesIn(field.value, into));
}

const directiveVariables = (node: { directives?: readonly DirectiveNode[] }, into: Set<string>) =>
  node.directives?.forEach((directive) => directive.arguments?.forEach((argument) => variablesIn(argument.value, into)));

/** The nearest token that is not a comment, before or after `token`. */
function significant(token: Token, direction: 'prev' | 'next'): Token | null {
  let current = token[direction];
  while (current && current.kind === TokenKind.COMMENT) current = current[direction];
  return current;
}

type Uses = { variables: Set<string>; fragments: Set<string> };

/**
 * The variables and fragments used below `roots`, following spreads (each fragment once) and
 * leaving out the selections `skip` says to.
 */
function usesBelow(options: {
  roots: readonly SelectionSetNode[];
  fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  skip(selection: SelectionNode): boolean;
}): Uses {
  const uses: Uses = { variables: new Set(), fragments: new Set() };
  const pending = [...options.roots];
  while (pending.length > 0) {
    for (const selection of pending.pop()!.selections) {
      if (options.skip(selection)) continue;
      directiveVariables(selection, uses.variables);
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = options.fragments.get(selection.name.value);
        if (fragment && !uses.fragments.has(selection.name.value)) {
          uses.fragments.add(selection.name.value);
          pending.push(fragment.selectionSet);
        }
        continue;
      }
      if (selection.kind === Kind.FIELD) selection.arguments?.forEach((argument) => variablesIn(argument.value, uses.variables));
      if (selection.selectionSet) pending.push(selection.selectionSet);
    }
  }
  return uses;
}

/** What the stripped nodes use, through the fragments they spread (GitLab suppresses "unused" for these). */
function strippedUses({ fragments, stripped }: Tagged): Uses {
  return usesBelow({ roots: [{ kind: Kind.SELECTION_SET, selections: [...stripped] }], fragments, skip: () => false });
}

/** Per operation, what its selections use with the stripped nodes left out. */
function keptUses({ operations, fragments, stripped }: Tagged): Uses[] {
  return operations.map((operation) => {
    const uses = usesBelow({ roots: [operation.selectionSet], fragments, skip: (selection) => stripped.has(selection) });
    directiveVariables(operation, uses.variables);
    return uses;
  });
}

/**
 * The cost of the stripped fields under a selection set, each field 1 (`__typename` free) and each
 * fragment counted at every spread, as the cost limit counts fields; each fragment is walked once.
 */
function strippedCosts({ fragments, stripped }: Tagged): (selectionSet: SelectionSetNode) => number {
  const perFragment = (cost: (selectionSet: SelectionSetNode) => number) => {
    const known = new Map<string, number>();
    return (name: string) => {
      const fragment = fragments.get(name);
      if (!fragment) return 0;
      let found = known.get(name);
      if (found === undefined) {
        known.set(name, 0); // a cycle (refused by validation) adds nothing
        found = cost(fragment.selectionSet);
        known.set(name, found);
      }
      return found;
    };
  };
  /** Every field of a selection. */
  const all = (selection: SelectionNode): number => {
    if (selection.kind === Kind.FRAGMENT_SPREAD) return allOfFragment(selection.name.value);
    const own = selection.kind === Kind.FIELD && selection.name.value !== '__typename' ? 1 : 0;
    return own + sum(selection.selectionSet, all);
  };
  const allOfFragment = perFragment((selectionSet) => sum(selectionSet, all));
  /** The stripped fields of a selection. */
  const strippedOnly = (selection: SelectionNode): number => {
    if (stripped.has(selection)) return all(selection);
    if (selection.kind === Kind.FRAGMENT_SPREAD) return strippedOfFragment(selection.name.value);
    return sum(selection.selectionSet, strippedOnly);
  };
  const strippedOfFragment = perFragment((selectionSet) => sum(selectionSet, strippedOnly));
  return (selectionSet) => sum(selectionSet, strippedOnly);
}

const sum = (selectionSet: SelectionSetNode | undefined, cost: (selection: SelectionNode) => number) =>
  (selectionSet?.selections ?? []).reduce((total, selection) => total + cost(selection), 0);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const responseKey = (field: FieldNode) => field.alias?.value ?? field.name.value;

/** The selection sets that hold a stripped node, directly or below (through fragments). */
function holdingStripped({ document, fragments, stripped }: Tagged): ReadonlySet<SelectionSetNode> {
  const marked = new Set<SelectionSetNode>();
  const fragmentMarks = new Map<string, boolean>();
  const markFragment = (name: string): boolean => {
    const fragment = fragments.get(name);
    if (!fragment) return false;
    if (!fragmentMarks.has(name)) {
      fragmentMarks.set(name, false); // a cycle (refused by validation) marks nothing
      fragmentMarks.set(name, mark(fragment.selectionSet));
    }
    return fragmentMarks.get(name)!;
  };
  // Every child is visited, not only up to the first that holds a stripped node.
  const mark = (selectionSet: SelectionSetNode): boolean => {
    let found = false;
    for (const selection of selectionSet.selections) {
      if (stripped.has(selection)) found = true;
      else if (selection.kind === Kind.FRAGMENT_SPREAD) found = markFragment(selection.name.value) || found;
      else if (selection.selectionSet) found = mark(selection.selectionSet) || found;
    }
    if (found) marked.add(selectionSet);
    return found;
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) mark(definition.selectionSet);
    else if (definition.kind === Kind.FRAGMENT_DEFINITION) markFragment(definition.name.value);
  }
  return marked;
}

/** Where one object of the answer came from: the selection sets merged into it, and its type. */
type Place = { selectionSets: readonly SelectionSetNode[]; type: GraphQLNamedType | undefined };

/**
 * Fills answers in: walks the result along the document as the executor collected it (fields of
 * one response key merged, fragments followed where they apply), only down the paths that hold a
 * stripped node, so the work stays below what executing the document took.
 */
function answerer(
  tagged: Tagged,
  placeholder: string,
): (data: Record<string, unknown>, options: { schema: GraphQLSchema; operation: OperationDefinitionNode }) => void {
  const { fragments, stripped } = tagged;
  const holds = holdingStripped(tagged);
  /** The response keys a stripped inline fragment would have added. */
  const fieldKeys = (selectionSet: SelectionSetNode, visited: Set<string>): string[] =>
    selectionSet.selections.flatMap((selection) => {
      if (selection.kind === Kind.FIELD) return [responseKey(selection)];
      if (selection.kind === Kind.INLINE_FRAGMENT) return fieldKeys(selection.selectionSet, visited);
      const fragment = fragments.get(selection.name.value);
      if (!fragment || visited.has(selection.name.value)) return [];
      visited.add(selection.name.value);
      return fieldKeys(fragment.selectionSet, visited);
    });

  return (data, { schema, operation }) => {
    const fill = (object: Record<string, unknown>, { selectionSets, type }: Place) => {
      const nulls: string[] = [];
      const below = new Map<string, { name: string; selectionSets: SelectionSetNode[] }>();
      const visited = new Set<string>();
      const applies = (condition: NamedTypeNode | undefined) => conditionHolds({ condition, type, object, schema });
      const collect = (selectionSet: SelectionSetNode) => {
        for (const selection of selectionSet.selections) {
          if (stripped.has(selection)) {
            if (selection.kind === Kind.FIELD) nulls.push(responseKey(selection));
            else if (selection.kind === Kind.INLINE_FRAGMENT && applies(selection.typeCondition))
              nulls.push(...fieldKeys(selection.selectionSet, new Set()));
          } else if (selection.kind === Kind.FIELD) {
            if (!selection.selectionSet || !holds.has(selection.selectionSet)) continue;
            const key = responseKey(selection);
            const entry = below.get(key) ?? { name: selection.name.value, selectionSets: [] };
            entry.selectionSets.push(selection.selectionSet);
            below.set(key, entry);
          } else if (selection.kind === Kind.INLINE_FRAGMENT) {
            if (holds.has(selection.selectionSet) && applies(selection.typeCondition)) collect(selection.selectionSet);
          } else if (!visited.has(selection.name.value)) {
            visited.add(selection.name.value);
            const fragment = fragments.get(selection.name.value);
            if (fragment && holds.has(fragment.selectionSet) && applies(fragment.typeCondition)) collect(fragment.selectionSet);
          }
        }
      };
      selectionSets.forEach(collect);
      delete object[placeholder];
      for (const key of nulls) if (!(key in object)) object[key] = null;
      for (const [key, field] of below) descend(object[key], { selectionSets: field.selectionSets, type: fieldType(type, field.name) });
    };
    const descend = (value: unknown, place: Place) => {
      if (Array.isArray(value)) value.forEach((item) => descend(item, place));
      else if (isRecord(value)) fill(value, place);
    };
    fill(data, { selectionSets: [operation.selectionSet], type: schema.getRootType(operation.operation) ?? undefined });
  };
}

function fieldType(type: GraphQLNamedType | undefined, name: string): GraphQLNamedType | undefined {
  if (!isObjectType(type) && !isInterfaceType(type)) return undefined;
  const field = type.getFields()[name];
  return field ? getNamedType(field.type) : undefined;
}

type ConditionCheck = {
  condition: NamedTypeNode | undefined;
  type: GraphQLNamedType | undefined;
  object: Record<string, unknown>;
  schema: GraphQLSchema;
};

/** Whether a fragment's type condition holds for an object the executor answered as `type`. */
function conditionHolds({ condition, type, object, schema }: ConditionCheck): boolean {
  if (!condition) return true;
  const conditionType = schema.getType(condition.name.value);
  if (!conditionType || !type) return false;
  let runtime: GraphQLNamedType = type;
  if (isAbstractType(type)) {
    // Which object type it was shows only in __typename; without it, nulls are put in rather than left out.
    const named = typeof object.__typename === 'string' ? schema.getType(object.__typename) : undefined;
    if (!named) return true;
    runtime = named;
  }
  if (conditionType === runtime) return true;
  return isAbstractType(conditionType) && isObjectType(runtime) && schema.isSubType(conditionType, runtime);
}
