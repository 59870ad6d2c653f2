import { z } from 'zod';
import { AppError, ERROR_CODES, ERROR_SOURCES, isAppError, type ErrorCode } from './app-error.js';

/**
 * RFC 9457 problem details, extended with the contract's fields (section 3). The schema is what
 * the OpenAPI document says every error looks like.
 */
export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int().min(400).max(599),
    detail: z.string(),
    code: z.enum(ERROR_CODES),
    source: z.enum(ERROR_SOURCES),
    requestId: z.string(),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .meta({ description: 'Validation failures: each bad field and what is wrong with it.' }),
  })
  .meta({ description: 'RFC 9457 problem details (contract section 3).' });
export type Problem = z.infer<typeof ProblemSchema>;

/** The one table from error code to HTTP status and title. */
const STATUS: Record<ErrorCode, [number, string]> = {
  VALIDATION_FAILED: [400, 'Bad Request'],
  MALFORMED_JSON: [400, 'Bad Request'],
  INVALID_CURSOR: [400, 'Bad Request'],
  INVALID_LINK: [400, 'Bad Request'],
  BAD_REQUEST: [400, 'Bad Request'],
  UNAUTHORIZED: [401, 'Unauthorized'],
  FORBIDDEN: [403, 'Forbidden'],
  CSRF_REJECTED: [403, 'Forbidden'],
  NOT_FOUND: [404, 'Not Found'],
  METHOD_NOT_ALLOWED: [405, 'Method Not Allowed'],
  NOT_ACCEPTABLE: [406, 'Not Acceptable'],
  REQUEST_TIMEOUT: [408, 'Request Timeout'],
  PAYLOAD_TOO_LARGE: [413, 'Content Too Large'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'Unsupported Media Type'],
  HEADERS_TOO_LARGE: [431, 'Request Header Fields Too Large'],
  RATE_LIMITED: [429, 'Too Many Requests'],
  TOO_MANY_STREAMS: [429, 'Too Many Requests'],
  INTERNAL: [500, 'Internal Server Error'],
  UPSTREAM_UNAVAILABLE: [502, 'Bad Gateway'],
  UPSTREAM_BAD_RESPONSE: [502, 'Bad Gateway'],
  UPSTREAM_ERROR: [502, 'Bad Gateway'],
  UPSTREAM_AUTH_FAILED: [502, 'Bad Gateway'],
  SERVICE_UNAVAILABLE: [503, 'Service Unavailable'],
  UPSTREAM_TIMEOUT: [504, 'Gateway Timeout'],
};

/** Each status's title, for documents that list problems by status (the OpenAPI document). */
export const STATUS_TITLES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.values(STATUS).map(([status, title]) => [status, title]),
);

export function statusOf(code: ErrorCode): number {
  return STATUS[code][0];
}

/** Problem type URIs are stable identifiers, one per code (RFC 9457 section 3.1.1). */
function typeOf(code: ErrorCode): string {
  return `urn:bff-gateway:problem:${code.toLowerCase().replaceAll('_', '-')}`;
}

/** Anything that is not an AppError is an internal fault whose details stay in the log. */
export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  return new AppError('INTERNAL', 'The gateway failed to handle this request.', { cause: error });
}

export function toProblem(error: AppError, requestId: string): Problem {
  const [status, title] = STATUS[error.code];
  return {
    type: typeOf(error.code),
    title,
    status,
    detail: error.message,
    code: error.code,
    source: error.source,
    requestId,
    ...(error.errors ? { errors: error.errors } : {}),
  };
}

/** A problem as it goes on the wire: status, headers and the serialised body. */
export interface ProblemResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The one rendering of an error as an HTTP answer (contract section 3), used by the error
 * handler and by the answers Node's parser errors get before any route runs.
 */
export function toProblemResponse(error: AppError, requestId: string): ProblemResponse {
  const headers: Record<string, string> = {
    ...error.headers,
    'Content-Type': 'application/problem+json; charset=utf-8',
    'Cache-Control': 'no-store',
  };
  if (error.retryAfterSeconds !== undefined) {
    headers['Retry-After'] = String(error.retryAfterSeconds);
  }
  return {
    status: statusOf(error.code),
    headers,
    body: JSON.stringify(toProblem(error, requestId)),
  };
}
