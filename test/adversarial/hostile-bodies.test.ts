import { deflateSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { APP_ORIGIN } from '../helpers/test-gateway.js';
import { sendWire, wireRequest } from '../helpers/raw-socket.js';
import { expectProblem, useUpstreams } from './hostile-helpers.js';

/*
 * Oversize, compressed, wrongly typed, wrongly labelled and corrupt request bodies, sent as raw
 * bytes: each gets its exact status (400, 413 or 415) before any upstream call.
 */

const upstreams = useUpstreams();

describe('oversize, wrongly typed and wrongly labelled bodies', () => {
  const JSON_TYPE: [string, string] = ['Content-Type', 'application/json'];
  /** A status body of exactly `bytes` bytes. */
  const sized = (bytes: number) => `{"status_text":"${'x'.repeat(bytes - 18)}"}`;
  const deep = (open: string, close: string, depth: number) =>
    open.repeat(depth) + close.repeat(depth);

  type BodyCase = [
    name: string,
    headers: [string, string][],
    body: Buffer | string,
    status: number,
    code: string | string[],
    chunked?: boolean,
  ];
  const BODY_CASES: BodyCase[] = [
    ['one byte over BODY_LIMIT_BYTES', [JSON_TYPE], sized(16_385), 413, 'PAYLOAD_TOO_LARGE'],
    [
      'exactly BODY_LIMIT_BYTES (then too long a text)',
      [JSON_TYPE],
      sized(16_384),
      400,
      'VALIDATION_FAILED',
    ],
    ['1 MB', [JSON_TYPE], sized(1_000_000), 413, 'PAYLOAD_TOO_LARGE'],
    [
      '20 kB chunked, without Content-Length',
      [JSON_TYPE],
      sized(20_000),
      413,
      'PAYLOAD_TOO_LARGE',
      true,
    ],
    [
      'a deflate bomb (1 kB inflating to 1 MB)',
      [JSON_TYPE, ['Content-Encoding', 'deflate']],
      deflateSync(sized(1_000_000)),
      413,
      'PAYLOAD_TOO_LARGE',
    ],
    [
      'corrupt gzip',
      [JSON_TYPE, ['Content-Encoding', 'gzip']],
      'this is not gzip',
      400,
      ['BAD_REQUEST', 'MALFORMED_JSON'],
    ],
    [
      'truncated gzip',
      [JSON_TYPE, ['Content-Encoding', 'gzip']],
      gzipSync('{"status_text":"x"}').subarray(0, 12),
      400,
      ['BAD_REQUEST', 'MALFORMED_JSON'],
    ],
    [
      'an unknown Content-Encoding',
      [JSON_TYPE, ['Content-Encoding', 'compress']],
      '{"status_text":"x"}',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['JSON null', [JSON_TYPE], 'null', 400, 'MALFORMED_JSON'],
    ['a JSON string', [JSON_TYPE], '"status_text"', 400, 'MALFORMED_JSON'],
    ['a JSON number', [JSON_TYPE], '42', 400, 'MALFORMED_JSON'],
    ['a JSON boolean', [JSON_TYPE], 'true', 400, 'MALFORMED_JSON'],
    ['an empty array', [JSON_TYPE], '[]', 400, 'VALIDATION_FAILED'],
    ['an array holding the object', [JSON_TYPE], '[{"status_text":"x"}]', 400, 'VALIDATION_FAILED'],
    ['arrays nested 8000 deep', [JSON_TYPE], deep('[', ']', 8000), 400, 'VALIDATION_FAILED'],
    [
      'status_text nested 5000 deep',
      [JSON_TYPE],
      `{"status_text":${deep('[', ']', 5000)}}`,
      400,
      'VALIDATION_FAILED',
    ],
    [
      'objects nested 2500 deep',
      [JSON_TYPE],
      `${'{"a":'.repeat(2500)}1${'}'.repeat(2500)}`,
      400,
      'VALIDATION_FAILED',
    ],
    ['status_text null', [JSON_TYPE], '{"status_text":null}', 400, 'VALIDATION_FAILED'],
    ['status_text an array', [JSON_TYPE], '{"status_text":["x"]}', 400, 'VALIDATION_FAILED'],
    ['emoji_name a boolean', [JSON_TYPE], '{"emoji_name":true}', 400, 'VALIDATION_FAILED'],
    [
      'reaction_type a number',
      [JSON_TYPE],
      '{"emoji_name":"a","reaction_type":1}',
      400,
      'VALIDATION_FAILED',
    ],
    [
      'a duplicate key ending as an object',
      [JSON_TYPE],
      '{"status_text":"x","status_text":{"a":1}}',
      400,
      'VALIDATION_FAILED',
    ],
    [
      'charset=latin1',
      [['Content-Type', 'application/json; charset=latin1']],
      '{"status_text":"x"}',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'charset=iso-8859-1',
      [['Content-Type', 'application/json; charset=iso-8859-1']],
      '{"status_text":"x"}',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'JSON labelled text/plain',
      [['Content-Type', 'text/plain']],
      '{"status_text":"x"}',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a form body',
      [['Content-Type', 'application/x-www-form-urlencoded']],
      'status_text=x',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a multipart body',
      [['Content-Type', 'multipart/form-data; boundary=x']],
      '--x--',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a +json media type',
      [['Content-Type', 'application/merge-patch+json']],
      '{"status_text":"x"}',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['a body without Content-Type', [], '{"status_text":"x"}', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    [
      'text/plain over the limit',
      [['Content-Type', 'text/plain']],
      sized(20_000),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['truncated JSON', [JSON_TYPE], '{"status_text":"x"', 400, 'MALFORMED_JSON'],
    [
      'JSON with trailing garbage',
      [JSON_TYPE],
      '{"status_text":"x"}garbage',
      400,
      'MALFORMED_JSON',
    ],
    ['whitespace only', [JSON_TYPE], '   ', 400, 'MALFORMED_JSON'],
    ['single-quoted JSON', [JSON_TYPE], "{'status_text':'x'}", 400, 'MALFORMED_JSON'],
    ['a NaN literal', [JSON_TYPE], '{"status_text":NaN}', 400, 'MALFORMED_JSON'],
    ['a comment', [JSON_TYPE], '{"status_text":"x"/* hi */}', 400, 'MALFORMED_JSON'],
    ['an empty JSON body', [JSON_TYPE], '', 400, 'VALIDATION_FAILED'],
  ];

  it.each(
    BODY_CASES.map(
      ([name, headers, body, status, code, chunked]) =>
        [
          name,
          status,
          typeof code === 'string' ? code : code.join(' or '),
          { headers, body, code, chunked },
        ] as const,
    ),
  )(
    'when the status body is %s, then it is exactly %i %s with no upstream call',
    async (_name, status, _code, { headers, body, code, chunked }) => {
      const gw = await upstreams.serviceGateway();
      const res = await sendWire(
        gw.app,
        wireRequest({
          method: 'POST',
          target: '/api/chat/users/4/status',
          headers: [['Origin', APP_ORIGIN], ['X-CSRF', '1'], ...headers],
          body,
          chunked: chunked === true,
        }),
      );
      expectProblem(res, status, code);
      expect(upstreams.calls()).toEqual([]);
    },
  );

  it('when a small status body is gzip-compressed, then it is accepted (the bomb case is not a blanket refusal)', async () => {
    const gw = await upstreams.serviceGateway();
    const res = await sendWire(
      gw.app,
      wireRequest({
        method: 'POST',
        target: '/api/chat/users/4/status',
        headers: [['Origin', APP_ORIGIN], ['X-CSRF', '1'], JSON_TYPE, ['Content-Encoding', 'gzip']],
        body: gzipSync('{"status_text":"zipped"}'),
      }),
    );
    expect(res.status).toBe(204);
    expect(new URLSearchParams(upstreams.chat.requests[0]!.body).get('status_text')).toBe('zipped');
  });

  it('when an emoji deletion carries a text/plain body, then it is 415 with no upstream call', async () => {
    const gw = await upstreams.serviceGateway();
    const res = await request(gw.app)
      .delete('/api/chat/emoji/party')
      .set({ Origin: APP_ORIGIN, 'X-CSRF': '1', 'Content-Type': 'text/plain' })
      .send('party');
    expectProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(upstreams.calls()).toEqual([]);
  });

  const LOGIN_CASES: [string, string, string, number, string][] = [
    ['an email number', 'application/json', '{"email":1,"password":"x"}', 400, 'VALIDATION_FAILED'],
    [
      'a password array',
      'application/json',
      '{"email":"marie@acme.test","password":["x"]}',
      400,
      'VALIDATION_FAILED',
    ],
    [
      'both password and api_key',
      'application/json',
      '{"email":"marie@acme.test","password":"x","api_key":"k"}',
      400,
      'VALIDATION_FAILED',
    ],
    ['no password', 'application/json', '{"email":"marie@acme.test"}', 400, 'VALIDATION_FAILED'],
    ['JSON null', 'application/json', 'null', 400, 'MALFORMED_JSON'],
    [
      'JSON as text/plain',
      'text/plain',
      '{"email":"marie@acme.test","password":"x"}',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a form',
      'application/x-www-form-urlencoded',
      'email=marie%40acme.test&password=x',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a body over the limit',
      'application/json',
      `{"email":"marie@acme.test","password":"${'x'.repeat(17_000)}"}`,
      413,
      'PAYLOAD_TOO_LARGE',
    ],
  ];

  it.each(
    LOGIN_CASES.map(
      ([name, type, body, status, code]) => [name, status, code, type, body] as const,
    ),
  )(
    'when the login body is %s, then it is exactly %i %s with no upstream call',
    async (_name, status, code, type, body) => {
      const gw = await upstreams.sessionGateway();
      const res = await request(gw.app)
        .post('/api/auth/login')
        .set({ Origin: APP_ORIGIN, 'X-CSRF': '1', 'Content-Type': type })
        .send(body);
      expectProblem(res, status, code);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(upstreams.calls()).toEqual([]);
    },
  );
});
