import { badInput } from './errors';

const PATH_SEGMENT = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,254}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

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
