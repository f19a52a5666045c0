import { badInput } from './errors';

const PATH_SEGMENT = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,254}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in its text form (what a uuid column takes without an error). */
export const isUuid = (value: string): boolean => UUID.test(value);

/** A username or a group/project path segment, GitLab's characters. */
export function requirePathSegment(value: string | undefined, field: string): string {
  if (!value || !PATH_SEGMENT.test(value) || value.endsWith('.git') || value.endsWith('.atom')) {
    throw badInput(`${field} must start with a letter, digit or underscore and contain only letters, digits, '_', '-' and '.'`, field);
  }
  return value;
}

export function requireNonBlank(value: string | undefined, field: string, maxLength = 255): string {
  const trimmed = value?.trim();
  if (!trimmed) throw badInput(`${field} can't be blank`, field);
  if (trimmed.length > maxLength) throw badInput(`${field} is too long (maximum is ${maxLength} characters)`, field);
  return trimmed;
}

export function requireEmail(value: string | undefined, field = 'email'): string {
  if (!value || !EMAIL.test(value)) throw badInput(`${field} is not a valid email address`, field);
  return value.toLowerCase();
}

export function requireEnum<T extends string>(value: string | undefined, allowed: readonly T[], field: string): T {
  if (!value || !(allowed as readonly string[]).includes(value)) {
    throw badInput(`${field} must be one of: ${allowed.join(', ')}`, field);
  }
  return value as T;
}

export function requirePositiveInt(value: string | number | undefined, field: string): number {
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(number) || number <= 0) throw badInput(`${field} must be a positive whole number`, field);
  return number;
}

/** A date as YYYY-MM-DD, not in the past. */
export function requireFutureDate(value: string, field: string, now: Date = new Date()): Date {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw badInput(`${field} must be a date as YYYY-MM-DD`, field);
  }
  if (value <= now.toISOString().slice(0, 10)) throw badInput(`${field} must be in the future`, field);
  return new Date(`${value}T00:00:00Z`);
}

/**
 * Where a JSON input breaks a rule every stored input follows: a string with a NUL byte or a lone
 * surrogate, or nesting too deep.
 */
export type UnsafeJson = { path: string; problem: UnsafeText | 'depth' };

/**
 * What makes a string unstorable: PostgreSQL refuses `\u0000` in text and jsonb, and a lone UTF-16
 * surrogate in jsonb (in text it became U+FFFD: a different string from the one sent).
 */
export type UnsafeText = 'nul' | 'surrogate';

export function unsafeText(text: string): UnsafeText | null {
  if (text.includes('\u0000')) return 'nul';
  return (text as string & { isWellFormed(): boolean }).isWellFormed() ? null : 'surrogate';
}

const TEXT_PROBLEMS: Record<UnsafeText, string> = {
  nul: 'contains a NUL byte (\\u0000), which is not accepted',
  surrogate: 'contains a lone surrogate (\\uD800-\\uDFFF without its pair: not Unicode text), which is not accepted',
};

/** The message for a string unsafeText refused, after the field's name. */
export function describeUnsafeText(problem: UnsafeText): string {
  return TEXT_PROBLEMS[problem];
}

/** A container on the walk's stack; its path is built from the parents only when a problem is found. */
type Container = { value: object; key: string; parent: Container | null; depth: number };

function pathOf(root: string, container: Container, key?: string | number): string {
  const keys = key === undefined ? [] : [String(key)];
  for (let node: Container | null = container; node?.parent; node = node.parent) keys.push(node.key);
  return keys.reduceRight((path, next) => (path ? `${path}.${next}` : next), root);
}

/**
 * Walks a parsed JSON value without recursion (a 5,000-level object must not overflow the stack)
 * and returns the first string holding a NUL byte (PostgreSQL refuses `\u0000` in text and jsonb)
 * or the first value deeper than maxDepth; keys count as strings too. Paths are dotted: `input.question`.
 * Only containers are put on the stack, and a path is spelled out only for the problem found: building
 * one for every value held the event loop 0.3–0.75 s for a 4 MiB body, before a webhook checked its secret.
 */
export function findUnsafeJson(value: unknown, options: { maxDepth: number; path?: string }): UnsafeJson | null {
  const root = options.path ?? '';
  if (typeof value === 'string') {
    const problem = unsafeText(value);
    return problem ? { path: root, problem } : null;
  }
  if (value === null || typeof value !== 'object') return null;
  const stack: Container[] = [{ value, key: '', parent: null, depth: 0 }];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (current.depth >= options.maxDepth) return { path: pathOf(root, current), problem: 'depth' };
    // An index is spelled as a key only when it is part of a path.
    const visit = (key: string | number, item: unknown): UnsafeJson | null => {
      const problem = (typeof key === 'string' ? unsafeText(key) : null) ?? (typeof item === 'string' ? unsafeText(item) : null);
      if (problem) return { path: pathOf(root, current, key), problem };
      if (item !== null && typeof item === 'object')
        stack.push({ value: item, key: String(key), parent: current, depth: current.depth + 1 });
      return null;
    };
    if (Array.isArray(current.value)) {
      for (let index = 0; index < current.value.length; index += 1) {
        const unsafe = visit(index, current.value[index]);
        if (unsafe) return unsafe;
      }
    } else {
      for (const key of Object.keys(current.value)) {
        const unsafe = visit(key, (current.value as Record<string, unknown>)[key]);
        if (unsafe) return unsafe;
      }
    }
  }
  return null;
}

export function describeUnsafeJson(unsafe: UnsafeJson, maxDepth: number): string {
  return unsafe.problem === 'depth' ? `is nested deeper than ${maxDepth} levels` : describeUnsafeText(unsafe.problem);
}

/** Throws BAD_USER_INPUT naming the field when a JSON input holds a NUL byte or a lone surrogate, or is nested too deep. */
export function requireSafeJson(value: unknown, field: string, maxDepth: number): void {
  const unsafe = findUnsafeJson(value, { maxDepth, path: field });
  if (!unsafe) return;
  const name = unsafe.path || field || 'body';
  throw badInput(`${name} ${describeUnsafeJson(unsafe, maxDepth)}`, name);
}

/** Limits of stored inputs that have no natural bound; documented in docs/security.md. */
export const INPUT_LIMITS = {
  /** aiAction's clientSubscriptionId (GitLab clients send a UUID). */
  clientSubscriptionId: 255,
  /** aiAction's platformOrigin (e.g. `language_server`). */
  platformOrigin: 255,
  /** One context item's metadata, as JSON. */
  contextMetadataBytes: 64 * 1024,
  /** A context item's `type` and each of its `disabledReasons` (GitLab's are short words and sentences). */
  contextItemText: 255,
  /** A context item's `schemaVersion` (`v0.0.1`). */
  contextSchemaVersion: 32,
  /** How many `disabledReasons` one context item may give. */
  contextDisabledReasons: 20,
  /** duoUserFeedback's trackingEvent category, action, label and property. */
  trackingEventField: 255,
  /** duoUserFeedback's trackingEvent.extra (the keys kept), as JSON. */
  trackingEventExtraBytes: 16 * 1024,
  /**
   * codeSuggestionFeedback's finalText, what the user wrote instead of a suggestion: twice what the longest
   * generation (2,048 tokens) holds, where a whole document's 400,000 characters let each call store 0.8 MB.
   */
  suggestionFinalText: 16_000,
} as const;

/** Null and undefined pass; a longer string is BAD_USER_INPUT naming the field. */
export function requireMaxLength(value: string | null | undefined, field: string, maxLength: number): void {
  if (value != null && value.length > maxLength) throw badInput(`${field} is too long (maximum is ${maxLength} characters)`, field);
}

/** Null and undefined pass; a value whose JSON is bigger is BAD_USER_INPUT naming the field. */
export function requireMaxJsonBytes(value: unknown, field: string, maxBytes: number): void {
  if (value == null) return;
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
  if (bytes > maxBytes) throw badInput(`${field} is too large (${bytes} bytes; maximum is ${maxBytes})`, field);
}
