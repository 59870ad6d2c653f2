import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Span } from '@opentelemetry/api';

/** W3C trace-context version 00: trace id, parent id, flags; all-zero ids are invalid. */
const TRACEPARENT = /^00-(?!0{32})([0-9a-f]{32})-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
/** The W3C limit for tracestate is 32 members; 512 characters is the safe length to pass on. */
const TRACESTATE_MAX = 512;

/** The headers that carry a trace: the SDK writes them itself, or they are passed on as received. */
export const TRACE_HEADERS: ReadonlySet<string> = new Set(['traceparent', 'tracestate']);

type TraceHeaders = Readonly<Record<string, string>>;
const incoming = new AsyncLocalStorage<TraceHeaders>();
const NONE: TraceHeaders = Object.freeze({});
let sdkActive = false;
/** The API's active span, once the SDK is loaded: the API itself is not imported before that. */
let activeSpan: () => Span | undefined = () => undefined;

/**
 * What an upstream call adds to carry the trace on. With the SDK loaded its instrumentations
 * write `traceparent` themselves and this is empty; without it, it is the request's own valid
 * `traceparent` (and `tracestate`), so a trace still reaches the upstreams (contract section 6).
 */
export function outgoingTraceHeaders(): TraceHeaders {
  return incoming.getStore() ?? NONE;
}

/** Whether the OpenTelemetry SDK writes the trace headers (set once, by startTracing). */
export function traceHeadersFromSdk(): boolean {
  return sdkActive;
}

export function markSdkActive(getActiveSpan: () => Span | undefined): void {
  sdkActive = true;
  activeSpan = getActiveSpan;
}

declare module 'http' {
  interface IncomingMessage {
    /** The request's trace id, for its log lines: from the SDK's span or a valid traceparent. */
    traceId?: string;
  }
}

/**
 * The trace part of the edge: the request's trace id for its log lines, the span named
 * `{method} {route}` when it ends (a hit never reaches Express, which would otherwise name it),
 * and, without the SDK, the incoming `traceparent` kept for the upstream calls made for it.
 */
export function enterTrace(
  req: IncomingMessage,
  res: ServerResponse,
  route: () => string,
  next: () => void,
): void {
  if (sdkActive) {
    const span = activeSpan();
    if (span) {
      req.traceId = span.spanContext().traceId;
      res.once('finish', () => {
        const template = route();
        span.updateName(`${req.method ?? 'GET'} ${template}`);
        span.setAttribute('http.route', template);
      });
    }
    next();
    return;
  }
  const parent = req.headers.traceparent;
  const match = typeof parent === 'string' ? TRACEPARENT.exec(parent) : null;
  if (!match) {
    next();
    return;
  }
  req.traceId = match[1] as string;
  const state = req.headers.tracestate;
  const headers =
    typeof state === 'string' && state.length > 0 && state.length <= TRACESTATE_MAX
      ? { traceparent: parent as string, tracestate: state }
      : { traceparent: parent as string };
  incoming.run(headers, next);
}
