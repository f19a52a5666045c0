import { badInput } from '../errors';

/** GitLab's limits for POST /api/v4/code_suggestions/completions. */
export const COMPLETION_LIMITS = {
  bodyBytes: 600_000,
  fileName: 255,
  content: 400_000,
  userInstruction: 600_000,
  contextName: 255,
  /** context[] is trimmed (first items kept) so its contents add up to at most this. */
  contextTotal: 500_000,
} as const;

export type CompletionContextItem = { type: 'file' | 'snippet'; name: string; content: string };

export type CompletionRequest = {
  fileName: string;
  contentAboveCursor: string;
  contentBelowCursor: string;
  intent: 'completion' | 'generation' | null;
  generationType: 'comment' | 'empty_function' | 'small_file' | null;
  userInstruction: string | null;
  stream: boolean;
  projectPath: string | null;
  context: CompletionContextItem[];
};

type Body = Record<string, unknown>;

function optionalString(body: Body, key: string, field: string, max: number): string | null {
  const value = body[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw badInput(`${field} is invalid`, field);
  if (value.length > max) throw badInput(`${field} is too long (maximum is ${max} characters)`, field);
  return value;
}

function oneOf<T extends string>(body: Body, key: string, allowed: readonly T[]): T | null {
  const value = body[key];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
    throw badInput(`${key} does not have a valid value (${allowed.join(', ')})`, key);
  return value as T;
}

/**
 * Parses GitLab's completions body (unknown extra fields tolerated), naming the field at fault.
 * The context is trimmed as GitLab does: the first items whose contents fit the total.
 */
export function parseCompletionRequest(raw: unknown): CompletionRequest {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw badInput('the body must be a JSON object', 'body');
  const body = raw as Body;
  const file = body.current_file;
  if (file === undefined || file === null) throw badInput('current_file is missing', 'current_file');
  if (typeof file !== 'object' || Array.isArray(file)) throw badInput('current_file is invalid', 'current_file');
  const currentFile = file as Body;
  const fileName = optionalString(currentFile, 'file_name', 'current_file[file_name]', COMPLETION_LIMITS.fileName);
  if (fileName === null) throw badInput('current_file[file_name] is missing', 'current_file[file_name]');
  const above = optionalString(currentFile, 'content_above_cursor', 'current_file[content_above_cursor]', COMPLETION_LIMITS.content);
  if (above === null) throw badInput('current_file[content_above_cursor] is missing', 'current_file[content_above_cursor]');
  const below = optionalString(currentFile, 'content_below_cursor', 'current_file[content_below_cursor]', COMPLETION_LIMITS.content) ?? '';
  const stream = body.stream;
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') throw badInput('stream is invalid', 'stream');
  return {
    fileName,
    contentAboveCursor: above,
    contentBelowCursor: below,
    intent: oneOf(body, 'intent', ['completion', 'generation'] as const),
    generationType: oneOf(body, 'generation_type', ['comment', 'empty_function', 'small_file'] as const),
    userInstruction: optionalString(body, 'user_instruction', 'user_instruction', COMPLETION_LIMITS.userInstruction),
    stream: stream === true,
    projectPath: optionalString(body, 'project_path', 'project_path', 1000),
    context: parseContext(body.context),
  };
}

function parseContext(raw: unknown): CompletionContextItem[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw badInput('context is invalid', 'context');
  const items: CompletionContextItem[] = [];
  let total = 0;
  raw.forEach((entry, index) => {
    const field = `context[${index}]`;
    if (!entry || typeof entry !== 'object') throw badInput(`${field} is invalid`, field);
    const item = entry as Body;
    if (item.type !== 'file' && item.type !== 'snippet')
      throw badInput(`${field}[type] does not have a valid value (file, snippet)`, `${field}[type]`);
    if (typeof item.name !== 'string' || !item.name.trim()) throw badInput(`${field}[name] is empty`, `${field}[name]`);
    if (item.name.length > COMPLETION_LIMITS.contextName)
      throw badInput(`${field}[name] is too long (maximum is ${COMPLETION_LIMITS.contextName} characters)`, `${field}[name]`);
    if (typeof item.content !== 'string' || !item.content.trim()) throw badInput(`${field}[content] is empty`, `${field}[content]`);
    total += item.content.length;
    if (total <= COMPLETION_LIMITS.contextTotal && items.length === index)
      items.push({ type: item.type, name: item.name, content: item.content });
  });
  return items;
}
