import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { AppError, isAppError } from '../errors/app-error.js';
import { toAppError, toProblemResponse } from '../errors/to-problem.js';

/** body-parser's errors carry a `type`; these are the client's mistakes, not ours. */
function fromBodyParser(error: unknown): AppError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  if (!('type' in error)) return fromClientError(error);
  switch (error.type) {
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large.', { cause: error });
    case 'entity.parse.failed':
      return new AppError('MALFORMED_JSON', 'The request body is not valid JSON.', {
        cause: error,
      });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be UTF-8 JSON.', {
        cause: error,
      });
    case 'request.aborted':
      return new AppError('BAD_REQUEST', 'The request body was not received in full.', {
        cause: error,
      });
    default:
      return fromClientError(error);
  }
}

/**
 * Other errors that Express and its parsers raise for the client's own mistakes carry a 4xx
 * `status`: a path parameter that does not percent-decode (a URIError from the router), a
 * compressed body that does not inflate (a zlib error). Their messages may echo input, so
 * the detail is ours.
 */
function fromClientError(error: object): AppError | undefined {
  const status = (error as { status?: unknown }).status;
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  const detail =
    error instanceof URIError
      ? 'The request path could not be decoded.'
      : 'The request could not be read.';
  return new AppError('BAD_REQUEST', detail, { cause: error });
}

/** The one place that turns the app's errors into responses (STYLE.md, rule 3). */
function sendProblem(req: Request, res: Response, error: unknown): void {
  const appError = isAppError(error) ? error : (fromBodyParser(error) ?? toAppError(error));
  const problem = toProblemResponse(appError, req.id);
  // The request's one log line carries the code and source; 5xx add the real error, cause and
  // all (pino-http logs `res.err`); a client's 4xx is no fault of ours and gets no stack.
  res.problem = { code: appError.code, source: appError.source };
  if (problem.status >= 500) {
    res.err = appError.cause instanceof Error ? appError.cause : appError;
  }
  // Body not read to its end (a guard refused it early): the connection cannot be reused, and
  // is closed once the answer is out instead of waiting for the rest of a body nobody wants.
  if (!req.complete) res.setHeader('Connection', 'close');
  res.status(problem.status).set(problem.headers).send(problem.body);
}

/**
 * The same answer for a stage in front of Express (the edge), which has no Express response:
 * the problem, its code on the log line, and the connection closed when the body was not read.
 */
export function writeProblem(req: IncomingMessage, res: ServerResponse, error: AppError): void {
  const problem = toProblemResponse(error, req.id);
  res.problem = { code: error.code, source: error.source };
  const headers: Record<string, string> = {
    ...problem.headers,
    'Content-Length': String(Buffer.byteLength(problem.body)),
  };
  if (!req.complete) headers['Connection'] = 'close';
  res.writeHead(problem.status, headers).end(problem.body);
}

export function createErrorHandler(): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      // Too late for an envelope; let Express end the socket so nothing half-sent looks complete.
      next(error);
      return;
    }
    sendProblem(req, res, error);
  };
}

export function createNotFound(): RequestHandler {
  return (req, _res, next) => {
    next(new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}.`));
  };
}

/** For `.all()` after a route's methods: a known path with an unsupported method. */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  return (req, _res, next) => {
    next(
      new AppError(
        'METHOD_NOT_ALLOWED',
        `${req.method} is not allowed here; use ${allowed.join(', ')}.`,
        {
          headers: { Allow: allowed.join(', ') },
        },
      ),
    );
  };
}

declare module 'http' {
  interface ServerResponse {
    /** The real error of a 5xx, for the request's log line (pino-http). */
    err?: Error;
    /** What the answer's problem said, for the request's log line. */
    problem?: { code: string; source: string };
  }
}
