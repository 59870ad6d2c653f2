import { expect } from 'vitest';
import type { ParsedResponse } from '../helpers/raw-socket.js';

/*
 * The hardening tests' problem+json check, for responses read off a raw socket
 * (test/helpers/raw-socket.ts) as well as supertest's.
 */

/** Titles of RFC 9110 for the statuses these tests meet (kept apart from the gateway's table). */
const TITLES: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  source: string;
  requestId: string;
}

/** The contract's envelope (section 3): problem+json with every field, from the gateway. */
export function expectProblem(
  res: { status: number; headers: Record<string, unknown>; text: string },
  status: number,
  code: string,
): Problem {
  expect(res.status, res.text.slice(0, 300)).toBe(status);
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const body = JSON.parse(res.text) as Problem;
  expect(body).toMatchObject({
    type: `urn:bff-gateway:problem:${code.toLowerCase().replaceAll('_', '-')}`,
    title: TITLES[status],
    status,
    code,
    source: 'gateway',
  });
  expect(typeof body.detail).toBe('string');
  expect(body.detail.length).toBeGreaterThan(0);
  expect(typeof body.requestId).toBe('string');
  expect(body.requestId.length).toBeGreaterThan(0);
  return body;
}

/** A parsed raw response in the shape expectProblem takes. */
export const asResponse = (res: ParsedResponse) => ({
  status: res.status,
  headers: res.headers,
  text: res.body,
});
