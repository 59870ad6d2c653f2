import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { serializeError } from '../logging/serialize-error.js';

/** Probes poll these every few seconds; a 503 from /readyz while draining is by design. */
const UNLOGGED = new Set(['/healthz', '/readyz']);

/** Request logging on the injected root logger: one line per finished request. */
export function createRequestLogger(
  logger: Logger,
): (req: IncomingMessage, res: ServerResponse) => void {
  const log = pinoHttp({
    logger,
    genReqId: (req) => req.id,
    // Every line written while serving a traced request carries its trace id (contract section 6).
    // pino-http skips falsy props at run time (no child logger per untraced request), though its
    // types say object.
    customProps: (req) =>
      (req.traceId === undefined ? undefined : { trace_id: req.traceId }) as object,
    autoLogging: { ignore: (req) => UNLOGGED.has(req.url ?? '') },
    // Keep lines small and free of headers that could carry credentials. The serializers get
    // the request and response themselves: pino-std-serializers' wrappers would first copy
    // every header of both into objects that these then throw away, on every request.
    wrapSerializers: false,
    serializers: {
      err: serializeError,
      req: (req: IncomingMessage & { id: string; originalUrl?: string }) => ({
        id: req.id,
        method: req.method,
        url: req.originalUrl ?? req.url,
        remoteAddress: req.socket?.remoteAddress,
      }),
      res: (res: ServerResponse) => ({
        statusCode: res.statusCode,
        cache: res.getHeader('x-cache'),
      }),
    },
    // A client's own 4xx is routine, not a warning: info, and never a stack (contract
    // section 6, Limits). Only the gateway's and the upstreams' 5xx are errors.
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    // Every answer that is a problem names its code and source on the line.
    customSuccessObject: (_req, res, line: object) => withProblem(res, line),
    customErrorObject: (_req, res, _err, line: object) => withProblem(res, line),
  });
  return (req, res) => log(req, res);
}

function withProblem(res: ServerResponse, line: object): object {
  return res.problem ? { ...line, code: res.problem.code, source: res.problem.source } : line;
}
