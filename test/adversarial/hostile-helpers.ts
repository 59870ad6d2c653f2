import type { IncomingHttpHeaders, RequestListener } from 'node:http';
import { expect } from 'vitest';
import { useUpstreams as useSharedUpstreams, type Upstreams } from '../helpers/upstreams.js';

/*
 * The raw-socket clients live in test/helpers/raw-socket.ts; these names stay importable from
 * here for the tests that always took them from here.
 */
export { sendWire, wireRequest, type WireResponse } from '../helpers/raw-socket.js';

/**
 * Wraps the app so that it sees these request header values, as if a lenient front proxy had
 * let them through: node's own parser would never hand CR or LF inside a value to the app.
 */
export function withRequestHeaders(
  app: RequestListener,
  overrides: IncomingHttpHeaders,
): RequestListener {
  return (req, res) => {
    Object.assign(req.headers, overrides);
    app(req, res);
  };
}

/** What the assertions below need of a supertest, rawRequest or sendWire response. */
export interface AnyResponse {
  status: number;
  headers: Record<string, unknown>;
  text?: unknown;
  body?: unknown;
}

/** One header as a string, whichever client produced the response. */
export function headerOf(res: AnyResponse, name: string): string | undefined {
  const value = res.headers[name.toLowerCase()];
  if (Array.isArray(value)) return value.join(', ');
  return typeof value === 'string' ? value : undefined;
}

export function textOf(res: AnyResponse): string {
  if (typeof res.text === 'string') return res.text;
  if (typeof res.body === 'string') return res.body;
  if (Buffer.isBuffer(res.body)) return res.body.toString('utf8');
  return '';
}

export type ProblemSource = 'gateway' | 'chat' | 'search';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  source: ProblemSource;
  requestId: string;
  errors?: { path: string; message: string }[];
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  502: 'Bad Gateway',
};

/**
 * Asserts the exact status and the whole RFC 9457 envelope: type, title, status, code (one
 * code, or any of a few where the contract leaves the choice open), source, and a requestId
 * equal to the X-Request-Id header. Returns the body for further checks.
 */
export function expectProblem(
  res: AnyResponse,
  status: number,
  code: string | readonly string[],
  source: ProblemSource = 'gateway',
): ProblemBody {
  expect(res.status, textOf(res).slice(0, 300)).toBe(status);
  expect(headerOf(res, 'content-type')).toBe('application/problem+json; charset=utf-8');
  const body = JSON.parse(textOf(res)) as ProblemBody;
  const codes = typeof code === 'string' ? [code] : code;
  expect(codes).toContain(body.code);
  expect(body).toMatchObject({
    type: `urn:bff-gateway:problem:${body.code.toLowerCase().replaceAll('_', '-')}`,
    title: TITLES[status],
    status,
    source,
    requestId: headerOf(res, 'x-request-id'),
  });
  expect(typeof body.detail).toBe('string');
  return body;
}

/** The `path`s of a VALIDATION_FAILED envelope's errors. */
export const errorPaths = (body: ProblemBody) => (body.errors ?? []).map((e) => e.path);

/** Object.prototype's own keys, to compare before and after hostile keys went through. */
export const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort();

/** Nothing reached Object.prototype: no `x`, no new keys. */
export function expectNoPollution(before: readonly string[]): void {
  const probe = {} as Record<string, unknown>;
  expect(probe['x']).toBeUndefined();
  expect(probe['admin']).toBeUndefined();
  expect(prototypeKeys()).toEqual(before);
}

/**
 * The shared simulator fixture, with the default deadlines: no hostile request here waits on an
 * upstream that never answers (the one delay sets its own deadline), and an answer that does come
 * must never race a short one on a loaded machine (issue 31, item 10).
 */
export const useUpstreams = () => useSharedUpstreams();
export type { Upstreams };
