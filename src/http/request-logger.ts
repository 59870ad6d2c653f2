import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

/** Probes poll these every few seconds; a 503 from /readyz while draining is by design. */
const UNLOGGED = new Set(['/healthz', '/readyz']);

/** Request logging on the injected root logger: one line per finished request. */
export function createRequestLogger(
  logger: Logger,
): (req: IncomingMessage, res: ServerResponse) => void {
  const log = pinoHttp({
    logger,
    genReqId: (req) => req.id,
    autoLogging: { ignore: (req) => UNLOGGED.has(req.url ?? '') },
    // Keep lines small and free of headers that could carry credentials.
    serializers: {
      req: (req: { id: string; method: string; url: string; remoteAddress?: string }) => ({
        id: req.id,
        method: req.method,
        url: req.url,
        remoteAddress: req.remoteAddress,
      }),
      res: (res: { statusCode: number; headers?: Record<string, unknown> }) => ({
        statusCode: res.statusCode,
        cache: res.headers?.['x-cache'],
      }),
    },
    customLogLevel: (_req, res, err) => {
      if (err || res.statusCode >= 500) return 'error';
      if (res.statusCode >= 400) return 'warn';
      return 'info';
    },
  });
  return (req, res) => log(req, res);
}
