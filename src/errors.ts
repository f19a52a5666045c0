/** The closed set of error codes callers branch on; each maps to a GraphQL code and an HTTP status. */
export type AppErrorCode =
  'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'BAD_USER_INPUT' | 'RATE_LIMITED' | 'CONFLICT' | 'UNAVAILABLE' | 'INTERNAL';

const HTTP_STATUS: Record<AppErrorCode, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  BAD_USER_INPUT: 400,
  RATE_LIMITED: 429,
  CONFLICT: 409,
  // A service the request needs (GitLab, in connected mode) did not answer: not the caller's fault, and not for ever.
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

export type AppErrorOptions = {
  code: AppErrorCode;
  /** Safe to show to the user. */
  userMessage: string;
  /** For logs only; defaults to userMessage. */
  internalMessage?: string;
  /** The input field at fault, when there is one. */
  field?: string;
  cause?: unknown;
};

export class AppError extends Error {
  readonly code: AppErrorCode;
  readonly userMessage: string;
  readonly field: string | undefined;

  constructor(options: AppErrorOptions) {
    super(options.internalMessage ?? options.userMessage, { cause: options.cause });
    this.name = 'AppError';
    this.code = options.code;
    this.userMessage = options.userMessage;
    this.field = options.field;
  }

  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}

/** GitLab's answer for anything the user may not see, whether or not it exists: never tells a hidden thing from a missing one. */
export const NOT_AVAILABLE =
  "The resource that you are attempting to access does not exist or you don't have permission to perform this action";

export const badInput = (userMessage: string, field?: string) => new AppError({ code: 'BAD_USER_INPUT', userMessage, field });
export const notFound = (userMessage = 'Resource not found') => new AppError({ code: 'NOT_FOUND', userMessage });
export const forbidden = (userMessage = 'You do not have permission to perform this action') =>
  new AppError({ code: 'FORBIDDEN', userMessage });
export const unauthenticated = (userMessage = '401 Unauthorized') => new AppError({ code: 'UNAUTHENTICATED', userMessage });

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

// An absolute path after a space, quote, bracket, `=` or `:` (not a URL's `//`), without the punctuation that ends a sentence.
const SERVER_PATH = /(^|[\s"'`(=:])\/(?!\/)(?:[^\s"'`)]*[^\s"'`),.:;])/g;

/** Text for users with server paths taken out (`/srv/repos/x.git` becomes `<path>`); logs keep the original. */
export function withoutServerPaths(text: string): string {
  return text.replace(SERVER_PATH, '$1<path>');
}
