import type { Redis } from 'ioredis';
import { badInput } from '../errors';

/**
 * The internal events IDE clients report through `POST /api/v4/usage_data/track_event` that we
 * count: the language server's code suggestion outcomes (its INSTANCE_TRACKING_EVENTS_MAP).
 * Other well-formed names are accepted, as GitLab accepts them, and not stored, so that clients
 * cannot grow the key space.
 */
export const COUNTED_USAGE_EVENTS = [
  'code_suggestion_shown_in_ide',
  'code_suggestion_accepted_in_ide',
  'code_suggestion_rejected_in_ide',
] as const;

export type TrackEventInput = {
  event?: unknown;
  namespace_id?: unknown;
  project_id?: unknown;
  additional_properties?: unknown;
  send_to_snowplow?: unknown;
};

/** The Redis hash of one UTC day's counts: field = event name, value = count. */
export function usageEventsKey(prefix: string, day: Date): string {
  return `${prefix}:usage_events:${day.toISOString().slice(0, 10)}`;
}

const optionalInteger = (value: unknown, name: string) => {
  if (value === undefined || value === null) return;
  if (!Number.isSafeInteger(typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value))
    throw badInput(`${name} is invalid`, name);
};

/** Validates an event as GitLab's usage data API does (Grape's messages) and counts it when it is one we keep. */
export async function trackUsageEvent(options: {
  redis: Redis;
  prefix: string;
  input: TrackEventInput;
  now?: Date;
}): Promise<{ counted: boolean }> {
  const { input } = options;
  if (input.event === undefined || input.event === null) throw badInput('event is missing', 'event');
  if (typeof input.event !== 'string' || !/^[a-z0-9_]{1,120}$/.test(input.event)) throw badInput('event is invalid', 'event');
  optionalInteger(input.namespace_id, 'namespace_id');
  optionalInteger(input.project_id, 'project_id');
  if (
    input.additional_properties !== undefined &&
    (typeof input.additional_properties !== 'object' || input.additional_properties === null || Array.isArray(input.additional_properties))
  ) {
    throw badInput('additional_properties is invalid', 'additional_properties');
  }
  if (!(COUNTED_USAGE_EVENTS as readonly string[]).includes(input.event)) return { counted: false };
  const key = usageEventsKey(options.prefix, options.now ?? new Date());
  await options.redis
    .multi()
    .hincrby(key, input.event, 1)
    .expire(key, 90 * 24 * 3600)
    .exec();
  return { counted: true };
}
