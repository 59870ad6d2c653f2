import { describe, expect, it } from 'vitest';
import { rawRequest } from '../helpers/raw-socket.js';
import { BROWSER_HEADERS } from '../helpers/test-gateway.js';
import { errorPaths, expectProblem, useUpstreams } from './hostile-helpers.js';

/*
 * Hostile path parameters, sent byte-for-byte (supertest would re-encode them). Every path
 * parameter either is refused before any upstream call, or reaches the chat server as exactly
 * one percent-encoded segment of the route it was meant for, never another path.
 */

const upstreams = useUpstreams();

type Param = 'email' | 'user_id' | 'emoji_name';

const ROUTES: Record<Param, { method: string; path: (value: string) => string; body?: string }> = {
  email: { method: 'GET', path: (v) => `/api/chat/users/${v}` },
  user_id: {
    method: 'POST',
    path: (v) => `/api/chat/users/${v}/status`,
    body: '{"status_text":"x"}',
  },
  emoji_name: { method: 'DELETE', path: (v) => `/api/chat/emoji/${v}` },
};

/**
 * One request on a fresh gateway, or (`shared`) on the file's gateway: a request refused
 * before any upstream call leaves nothing behind but a count far below the rate limit.
 */
async function send(method: string, path: string, body?: string, shared = false) {
  const gw = shared
    ? await upstreams.fileGateway({ env: upstreams.serviceEnv() })
    : await upstreams.serviceGateway();
  return rawRequest(gw.app, {
    method,
    path,
    headers: {
      ...BROWSER_HEADERS,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body }),
  });
}

const sendTo = (param: Param, value: string, shared = false) => {
  const route = ROUTES[param];
  return send(route.method, route.path(value), route.body, shared);
};
/** For values the gateway must refuse before any upstream call. */
const sendRefused = (param: Param, value: string) => sendTo(param, value, true);

describe('path traversal and encoded separators', () => {
  it.each<[Param, string, string]>([
    ['email', 'a literal ..', '..'],
    ['email', 'encoded dots', '%2e%2e'],
    ['email', 'mixed-case encoded ../', '%2E%2e%2f'],
    ['email', 'an encoded traversal without @', '..%2F..%2Fdrafts'],
    ['email', 'a backslash traversal without @', '..%5C..%5Cdrafts'],
    ['email', 'double encoding without @', '%252e%252e%252fdrafts'],
    ['email', 'a semicolon without @', '..;jsessionid=x'],
    ['email', 'a NUL', 'marie%00@acme.test'],
    ['email', 'an encoded CRLF', 'marie%0D%0AX-Injected:%201@acme.test'],
    ['email', 'a Unicode line separator', 'marie%E2%80%A8@acme.test'],
    ['email', 'a no-break space', '%C2%A0marie@acme.test'],
    ['email', 'a second @ smuggled as %40', 'a%40b@acme.test'],
    ['user_id', 'a literal ..', '..'],
    ['user_id', 'encoded dots', '%2e%2e'],
    ['user_id', 'mixed-case encoded ../', '%2E%2e%2f'],
    ['user_id', 'an encoded slash traversal', '4%2F..%2F5'],
    ['user_id', 'a trailing encoded slash', '4%2F'],
    ['user_id', 'an encoded backslash', '4%5C..%5C5'],
    ['user_id', 'double encoding', '%252e%252e%252f'],
    ['user_id', 'a matrix parameter', '4;x=1'],
    ['user_id', 'an encoded semicolon', '4%3B'],
    ['user_id', 'a NUL', '4%00'],
    ['user_id', 'fullwidth dots', '%EF%BC%8E%EF%BC%8E'],
    ['emoji_name', 'a literal ..', '..'],
    ['emoji_name', 'a literal .', '.'],
    ['emoji_name', 'encoded dots', '%2e%2e'],
    ['emoji_name', 'one encoded dot', '%2e'],
    ['emoji_name', 'half-encoded dots', '.%2E'],
    ['emoji_name', 'mixed-case encoded ../', '%2E%2e%2f'],
    ['emoji_name', 'an encoded slash alone', '%2F'],
    ['emoji_name', 'an encoded slash', 'a%2Fb'],
    ['emoji_name', 'an encoded backslash alone', '%5C'],
    ['emoji_name', 'a backslash traversal', '..%5C..%5Cusers'],
    ['emoji_name', 'a NUL', 'a%00b'],
    ['emoji_name', 'an encoded CRLF', 'a%0D%0Ab'],
  ])(
    'when %s has %s (%s), then it is 400 VALIDATION_FAILED naming it, with no upstream call',
    async (param, _name, value) => {
      const res = await sendRefused(param, value);
      const body = expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(errorPaths(body)).toContain(`path.${param}`);
      expect(upstreams.calls()).toEqual([]);
    },
  );

  it.each<[Param, string, string]>([
    ['email', 'an invalid escape %zz', '%zz@acme.test'],
    ['email', 'an overlong UTF-8 dot %c0%ae', '%c0%ae%c0%ae@acme.test'],
    ['email', 'a truncated escape %E0%A4%A', '%E0%A4%A@acme.test'],
    ['email', 'a lone %', '%@acme.test'],
    ['email', 'an encoded UTF-16 surrogate', '%ED%A0%80@acme.test'],
    ['user_id', 'an invalid escape %zz', '%zz'],
    ['user_id', 'an overlong UTF-8 dot %c0%ae', '%c0%ae'],
    ['user_id', 'a truncated escape %E0%A4%A', '%E0%A4%A'],
    ['user_id', 'a lone %', '4%'],
    ['emoji_name', 'an invalid escape %zz', '%zz'],
    ['emoji_name', 'an overlong UTF-8 dot %c0%ae', '%c0%ae%c0%ae'],
    ['emoji_name', 'a truncated escape %E0%A4%A', '%E0%A4%A'],
    ['emoji_name', 'a lone %', 'party%'],
    ['emoji_name', 'an encoded UTF-16 surrogate', '%ED%A0%80'],
  ])(
    'when %s has %s (%s), then it is a 400 envelope, never a 500, with no upstream call',
    async (param, _name, value) => {
      const res = await sendRefused(param, value);
      // The contract leaves the code open for a path that cannot even be decoded; never INTERNAL.
      expectProblem(res, 400, ['VALIDATION_FAILED', 'BAD_REQUEST']);
      expect(upstreams.calls()).toEqual([]);
    },
  );

  it.each<[Param, string, string, string]>([
    ['email', 'an encoded slash', 'a%2Fb@acme.test', '/api/v1/users/a%2Fb%40acme.test'],
    [
      'email',
      'an encoded traversal',
      '..%2F..%2Fdrafts@acme.test',
      '/api/v1/users/..%2F..%2Fdrafts%40acme.test',
    ],
    ['email', 'encoded dots', '%2e%2e@acme.test', '/api/v1/users/..%40acme.test'],
    [
      'email',
      'a backslash traversal',
      '..%5C..%5Cdrafts@acme.test',
      '/api/v1/users/..%5C..%5Cdrafts%40acme.test',
    ],
    [
      'email',
      'double encoding',
      '%252e%252e%252fdrafts@acme.test',
      '/api/v1/users/%252e%252e%252fdrafts%40acme.test',
    ],
    ['email', 'a raw semicolon', 'marie;x=1@acme.test', '/api/v1/users/marie%3Bx%3D1%40acme.test'],
    ['email', 'an encoded ? and #', 'a%3Fb%23c@acme.test', '/api/v1/users/a%3Fb%23c%40acme.test'],
    [
      'email',
      'fullwidth dots and slash',
      '%EF%BC%8E%EF%BC%8E%EF%BC%8Fdrafts@acme.test',
      '/api/v1/users/%EF%BC%8E%EF%BC%8E%EF%BC%8Fdrafts%40acme.test',
    ],
    ['email', 'a two-dot leader', '%E2%80%A5@acme.test', '/api/v1/users/%E2%80%A5%40acme.test'],
    ['email', 'dots around the @', '..@..', '/api/v1/users/..%40..'],
    ['email', 'a percent sign', '100%25@acme.test', '/api/v1/users/100%25%40acme.test'],
    ['email', 'a prototype key', '__proto__@acme.test', '/api/v1/users/__proto__%40acme.test'],
    ['user_id', 'the largest 32-bit id', '2147483647', '/api/v1/users/2147483647/status'],
    ['emoji_name', 'double encoding', '%252e%252e%252f', '/api/v1/realm/emoji/%252e%252e%252f'],
    ['emoji_name', 'a raw semicolon', 'party;x=1', '/api/v1/realm/emoji/party%3Bx%3D1'],
    [
      'emoji_name',
      'fullwidth dots',
      '%EF%BC%8E%EF%BC%8E',
      '/api/v1/realm/emoji/%EF%BC%8E%EF%BC%8E',
    ],
    ['emoji_name', 'a two-dot leader', '%E2%80%A5', '/api/v1/realm/emoji/%E2%80%A5'],
    ['emoji_name', 'three dots', '...', '/api/v1/realm/emoji/...'],
    ['emoji_name', 'an encoded ? and #', 'a%3Fb%23c', '/api/v1/realm/emoji/a%3Fb%23c'],
    ['emoji_name', 'a percent sign', '%25', '/api/v1/realm/emoji/%25'],
    ['emoji_name', 'a prototype key', '__proto__', '/api/v1/realm/emoji/__proto__'],
  ])(
    'when %s has %s (%s), then the chat server gets it as one encoded segment and answers 404',
    async (param, _name, value, upstreamUrl) => {
      const res = await sendTo(param, value);
      expectProblem(res, 404, 'NOT_FOUND', 'chat');
      expect(upstreams.chat.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
        `${ROUTES[param].method} ${upstreamUrl}`,
      ]);
      expect(upstreams.search.requests).toEqual([]);
    },
  );

  it.each([
    ['GET', '/api/chat/users/marie@acme.test/../../drafts'],
    ['GET', '/api/chat/users/../drafts'],
    ['POST', '/api/chat/users/4/../5/status'],
    ['POST', '/api/chat/users/4/status/..'],
    ['DELETE', '/api/chat/emoji/../users/4'],
    ['DELETE', '/api/chat/emoji/a/b'],
    ['DELETE', '/api/chat/emoji/'],
  ])(
    'when %s %s has literal extra segments, then no route matches: 404 with no upstream call',
    async (method, path) => {
      const res = await send(
        method,
        path,
        method === 'POST' ? '{"status_text":"x"}' : undefined,
        true,
      );
      expectProblem(res, 404, 'NOT_FOUND');
      expect(upstreams.calls()).toEqual([]);
    },
  );
});

describe('ambiguous integers for user_id', () => {
  it.each([
    ['a raw plus sign', '+4'],
    ['an encoded plus sign', '%2B4'],
    ['a leading space', '%204'],
    ['a trailing space', '4%20'],
    ['a leading tab', '%094'],
    ['a trailing newline', '4%0A'],
    ['a leading zero', '04'],
    ['two leading zeros', '004'],
    ['an exponent', '4e0'],
    ['hex', '0x4'],
    ['octal', '0o4'],
    ['binary', '0b100'],
    ['a trailing dot', '4.'],
    ['a fraction', '4.0'],
    ['fullwidth digits', '%EF%BC%91%EF%BC%92'],
    ['an Arabic-Indic digit', '%D9%A4'],
    ['2^53 + 1', '9007199254740993'],
    ['2^31', '2147483648'],
    ['negative zero', '-0'],
    ['a negative number', '-4'],
    ['zero', '0'],
    ['Infinity', 'Infinity'],
    ['NaN', 'NaN'],
    ['a BigInt literal', '4n'],
    ['a numeric separator', '1_0'],
  ])('when user_id is %s (%s), then it is 400 with no upstream call', async (_name, id) => {
    const res = await sendRefused('user_id', id);
    const body = expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(body.errors).toEqual([
      { path: 'path.user_id', message: 'user_id must be a positive whole number' },
    ]);
    expect(upstreams.calls()).toEqual([]);
  });

  it('when user_id is empty, then no route matches: 404 with no upstream call', async () => {
    const res = await sendRefused('user_id', '');
    expectProblem(res, 404, 'NOT_FOUND');
    expect(upstreams.calls()).toEqual([]);
  });

  it('when user_id is a plain 4, then the chat server gets exactly /users/4/status', async () => {
    const res = await sendTo('user_id', '4');
    expect(res.status).toBe(204);
    expect(upstreams.chat.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /api/v1/users/4/status',
    ]);
  });
});
