import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { AppError, type ErrorCode } from '../errors/app-error.js';
import { toProblemResponse } from '../errors/to-problem.js';
import type { LogThrottle } from '../logging/log-throttle.js';

/*
 * What the listener answers before any route runs (contract section 3: errors Node's parser
 * raises are problem+json too; section 7: a request without Host is 400 problem+json).
 */

/** The detail a Host-less HTTP/1.1 request is answered with (contract section 7, "Edges"). */
const MISSING_HOST =
  'The request has no Host header; HTTP/1.1 requires one (RFC 9112 section 3.2).';

/** Node's own parser failures, as the contract's problems (section 3). */
function parserProblem(code: string | undefined): { code: ErrorCode; detail: string } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { code: 'HEADERS_TOO_LARGE', detail: 'The request headers are too large.' };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { code: 'REQUEST_TIMEOUT', detail: 'The request did not arrive in time.' };
  }
  return { code: 'BAD_REQUEST', detail: 'The request could not be parsed as HTTP.' };
}

/**
 * An HTTP/1.1 request must name its Host (RFC 9112 section 3.2); HTTP/1.0 predates the rule
 * and is served without one, as Node serves it.
 */
export function lacksHost(req: IncomingMessage): boolean {
  return req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 && req.headers.host === undefined;
}

/** A Host-less HTTP/1.1 request: 400 problem+json, and the connection closes as Node's would. */
export function answerMissingHost(res: ServerResponse, throttle: LogThrottle): void {
  const requestId = randomUUID();
  const problem = toProblemResponse(new AppError('BAD_REQUEST', MISSING_HOST), requestId);
  throttle.info(
    'client-error:MISSING_HOST',
    { code: 'BAD_REQUEST', remoteAddress: res.socket?.remoteAddress },
    'request without Host answered',
  );
  res.shouldKeepAlive = false;
  res.writeHead(problem.status, {
    ...problem.headers,
    'X-Request-Id': requestId,
    'Content-Length': String(Buffer.byteLength(problem.body)),
  });
  res.end(problem.body);
}

/** Node's own parser failures (slow or oversized heads, garbage) answered as problem+json. */
export function answerClientErrors(server: Server, throttle: LogThrottle): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const inProgress = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })
      ._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent) {
      socket.destroy();
      return;
    }
    const { code, detail } = parserProblem(error.code);
    const requestId = randomUUID();
    const problem = toProblemResponse(new AppError(code, detail), requestId);
    throttle.info(
      `client-error:${code}`,
      { code, remoteAddress: socket.remoteAddress },
      'unreadable request answered',
    );
    const head = Object.entries({
      ...problem.headers,
      'X-Request-Id': requestId,
      'Content-Length': String(Buffer.byteLength(problem.body)),
      Connection: 'close',
    }).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.end(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n${head.join('')}\r\n${problem.body}`,
    );
  });
}
