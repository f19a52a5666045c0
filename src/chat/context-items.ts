import type { ContextCategory } from '../config';
import { AppError, badInput } from '../errors';
import { INPUT_LIMITS, requireMaxJsonBytes, requireMaxLength } from '../validation';

/** A context item as we accept and store it: GitLab's additionalContext plus the AiContextItem contract. */
export type ContextItem = {
  id: string;
  category: ContextCategory;
  content: string;
  metadata: Record<string, unknown> | null;
  schemaVersion: string;
  type: string | null;
  isEnabled: boolean;
  disabledReasons: string[];
};

export type ContextItemInput = {
  id: string;
  category: ContextCategory;
  content: string;
  metadata?: unknown;
  schemaVersion?: string | null;
  type?: string | null;
  isEnabled?: boolean | null;
  disabledReasons?: string[] | null;
};

export const CONTEXT_LIMITS = {
  idLength: 255,
  contentLength: 600_000,
  /** All items of one request together. */
  totalContentLength: 1_000_000,
  items: 50,
} as const;

/** Major versions of the AiContextItem contract we understand. */
export const ACCEPTED_SCHEMA_MAJORS = [0] as const;
export const DEFAULT_SCHEMA_VERSION = 'v0.0.1';

const label = (index: number, id: string) => `additionalContext[${index}] (${JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id)})`;

function pick<T>(
  input: T | null | undefined,
  metadata: Record<string, unknown> | null,
  key: string,
  check: (value: unknown) => value is T,
): T | undefined {
  if (input !== null && input !== undefined) return input;
  const value = metadata?.[key];
  return check(value) ? value : undefined;
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean';
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);

/**
 * Checks a request's context items against the contract and the user's allowed categories, and
 * returns them normalized. Throws before anything is stored: BAD_USER_INPUT naming the item for
 * limits and shape, FORBIDDEN naming the category the user may not use.
 */
export function validateContextItems(items: readonly ContextItemInput[], allowed: readonly ContextCategory[]): ContextItem[] {
  if (items.length > CONTEXT_LIMITS.items)
    throw badInput(`additionalContext has ${items.length} items; at most ${CONTEXT_LIMITS.items} are accepted`, 'additionalContext');
  let total = 0;
  const seen = new Set<string>();
  return items.map((item, index) => {
    const name = label(index, item.id);
    if (!item.id.trim()) throw badInput(`${name}: id can't be blank`, 'additionalContext.id');
    if (item.id.length > CONTEXT_LIMITS.idLength)
      throw badInput(`${name}: id is too long (maximum is ${CONTEXT_LIMITS.idLength} characters)`, 'additionalContext.id');
    if (item.content.length > CONTEXT_LIMITS.contentLength) {
      throw badInput(`${name}: content is too long (maximum is ${CONTEXT_LIMITS.contentLength} characters)`, 'additionalContext.content');
    }
    total += item.content.length;
    if (total > CONTEXT_LIMITS.totalContentLength) {
      throw badInput(
        `${name}: all additionalContext content together is over ${CONTEXT_LIMITS.totalContentLength} characters`,
        'additionalContext.content',
      );
    }
    if (item.metadata !== null && item.metadata !== undefined && (typeof item.metadata !== 'object' || Array.isArray(item.metadata))) {
      throw badInput(`${name}: metadata must be an object`, 'additionalContext.metadata');
    }
    requireMaxJsonBytes(item.metadata, 'additionalContext.metadata', INPUT_LIMITS.contextMetadataBytes);
    const metadata = (item.metadata ?? null) as Record<string, unknown> | null;
    const schemaVersion = pick(item.schemaVersion, metadata, 'schemaVersion', isString) ?? DEFAULT_SCHEMA_VERSION;
    requireMaxLength(schemaVersion, 'additionalContext.schemaVersion', INPUT_LIMITS.contextSchemaVersion);
    const major = /^v?(\d+)\.\d+\.\d+$/.exec(schemaVersion)?.[1];
    if (major === undefined || !(ACCEPTED_SCHEMA_MAJORS as readonly number[]).includes(Number(major))) {
      throw badInput(
        `${name}: schemaVersion ${JSON.stringify(schemaVersion)} is not supported; accepted: ` +
          `${ACCEPTED_SCHEMA_MAJORS.map((accepted) => `v${accepted}.x.x`).join(', ')}`,
        'additionalContext.schemaVersion',
      );
    }
    const isEnabled = pick(item.isEnabled, metadata, 'isEnabled', isBoolean) ?? true;
    const disabledReasons = pick(item.disabledReasons, metadata, 'disabledReasons', isStringArray) ?? [];
    if (disabledReasons.length > INPUT_LIMITS.contextDisabledReasons)
      throw badInput(
        `${name}: disabledReasons is too long (maximum is ${INPUT_LIMITS.contextDisabledReasons} reasons)`,
        'additionalContext.disabledReasons',
      );
    for (const reason of disabledReasons) requireMaxLength(reason, 'additionalContext.disabledReasons', INPUT_LIMITS.contextItemText);
    if (!isEnabled) {
      throw badInput(
        `${name} is disabled${disabledReasons.length ? ` (${disabledReasons.join('; ')})` : ''} and cannot be sent to the model; remove ` +
          `it and send again`,
        'additionalContext.isEnabled',
      );
    }
    if (!allowed.includes(item.category)) {
      throw new AppError({
        code: 'FORBIDDEN',
        userMessage:
          `${name}: the ${item.category.toUpperCase()} context category is not available to you ` +
          `(include_${item.category}_context is not in duoChatAvailableFeatures)`,
        field: 'additionalContext.category',
      });
    }
    if (seen.has(`${item.category}:${item.id}`)) throw badInput(`${name}: the same item was sent twice`, 'additionalContext.id');
    seen.add(`${item.category}:${item.id}`);
    const type = pick(item.type, metadata, 'type', isString) ?? null;
    requireMaxLength(type, 'additionalContext.type', INPUT_LIMITS.contextItemText);
    return {
      id: item.id,
      category: item.category,
      content: item.content,
      metadata,
      schemaVersion,
      type,
      isEnabled,
      disabledReasons,
    };
  });
}
