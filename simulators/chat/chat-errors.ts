/**
 * The chat server's one error family. Every error answer of the simulator is a ChatApiError,
 * and exactly one place (chat-responses.ts) turns it into a response, the way Zulip's
 * JsonableError → json_response_from_error does: `{result: "error", msg, code, ...data}`.
 */
export class ChatApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** Extra top-level fields of the error body (Zulip's `data_fields`), e.g. `var_name`. */
  readonly data: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    status: number,
    code: string,
    msg: string,
    extra: { data?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(msg);
    this.name = 'ChatApiError';
    this.status = status;
    this.code = code;
    this.data = extra.data ?? {};
    this.headers = extra.headers ?? {};
  }
}

/**
 * Zulip's default error: code BAD_REQUEST, HTTP 400 (OpenAPI CodedError; chat document 7.2
 * lists every update-status error with this code).
 */
export function badRequest(msg: string): ChatApiError {
  return new ChatApiError(400, 'BAD_REQUEST', msg);
}

/** Zulip's ResourceNotFoundError: 404 but still code BAD_REQUEST (OpenAPI /realm/emoji 404). */
export function notFound(msg: string): ChatApiError {
  return new ChatApiError(404, 'BAD_REQUEST', msg);
}

/** Zulip's RequestVariableMissingError (OpenAPI MissingArgumentError). */
export function missingArgument(name: string): ChatApiError {
  return new ChatApiError(400, 'REQUEST_VARIABLE_MISSING', `Missing '${name}' argument`, {
    data: { var_name: name },
  });
}

/**
 * A rejected Basic-auth attempt on the REST API. Zulip answers these with 401 and
 * `WWW-Authenticate: Basic realm="zulip"` (UnauthorizedError in zerver/lib/exceptions.py).
 */
export function unauthorized(code: string, msg: string): ChatApiError {
  return new ChatApiError(401, code, msg, {
    headers: { 'www-authenticate': 'Basic realm="zulip"' },
  });
}

/**
 * Zulip's rate-limit answer (OpenAPI RateLimitedError). The body's `retry-after` is an integer
 * because the schema says `type: integer` (Zulip's own example shows a float).
 */
export function rateLimited(seconds: number, nowMs: number): ChatApiError {
  return new ChatApiError(429, 'RATE_LIMIT_HIT', 'API usage exceeded rate limit', {
    data: { 'retry-after': seconds },
    headers: {
      'retry-after': String(seconds),
      'x-ratelimit-limit': '200',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Math.floor(nowMs / 1000) + seconds),
    },
  });
}
