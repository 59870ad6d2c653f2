/** Where an error came from, as the envelope's `source` reports it (contract section 3). */
export const ERROR_SOURCES = ['gateway', 'chat', 'search'] as const;
export type ErrorSource = (typeof ERROR_SOURCES)[number];

/**
 * Stable machine codes. Each maps to exactly one HTTP status in to-problem.ts; code that
 * branches on errors matches these, never message text.
 */
export const ERROR_CODES = [
  'VALIDATION_FAILED',
  'MALFORMED_JSON',
  'INVALID_CURSOR',
  'INVALID_LINK',
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'CSRF_REJECTED',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'NOT_ACCEPTABLE',
  'REQUEST_TIMEOUT',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'HEADERS_TOO_LARGE',
  'RATE_LIMITED',
  'TOO_MANY_STREAMS',
  'INTERNAL',
  'UPSTREAM_UNAVAILABLE',
  'UPSTREAM_BAD_RESPONSE',
  'UPSTREAM_ERROR',
  'UPSTREAM_AUTH_FAILED',
  'SERVICE_UNAVAILABLE',
  'UPSTREAM_TIMEOUT',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface FieldError {
  path: string;
  message: string;
}

export interface AppErrorOptions {
  source?: ErrorSource;
  /** Validation failures list each bad field. */
  errors?: FieldError[];
  /** Whole seconds; becomes the `Retry-After` header. */
  retryAfterSeconds?: number;
  /** Extra response headers (for example `Allow` on 405). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The one error family. `detail` is safe to show to a browser: it never carries upstream
 * URLs, credentials or stack traces. Internals go in `cause`, which only reaches the log.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly source: ErrorSource;
  readonly errors: FieldError[] | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, detail: string, options: AppErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.source = options.source ?? 'gateway';
    this.errors = options.errors;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers;
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
