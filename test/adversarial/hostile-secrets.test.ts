import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { describeConfig } from '../../config/describe-config.js';
import type { CredentialKind } from '../../simulators/chat/chat-simulator.js';
import { createSearchSimulator } from '../../simulators/search/search-simulator.js';
import type { Fault } from '../../simulators/sim-faults.js';
import { createLogCapture } from '../helpers/log-capture.js';
import { findLeaks, leakForms, secretCanaries } from '../helpers/secret-canaries.js';
import {
  BROWSER_HEADERS,
  CURSOR_SECRET,
  SEARCH_TOKEN,
  SESSION_SECRET,
  createTestGateway,
  type TestGateway,
} from '../helpers/test-gateway.js';
import { TEST_REDIS_URL } from '../helpers/test-redis.js';
import { useUpstreams, type Upstreams } from './hostile-helpers.js';

/*
 * Canary secrets (contract sections 1 and 3): across successes, validation errors, upstream
 * faults, logins that work and fail and a session the chat server stops accepting, no secret
 * appears in any response header, body or log line — raw, base64, in Basic-auth form or
 * form-encoded.
 */

const upstreams = useUpstreams();

const KINDS: CredentialKind[] = ['owner', 'administrator', 'member', 'guest', 'bot', 'deactivated'];
/** A service key the chat server does not know: the gateway must not leak it either. */
const WRONG_SERVICE_KEY = 'canaryWrongServiceKey0123456789ab';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const b64url = (text: string) => Buffer.from(text).toString('base64url');

function secrets(u: Upstreams): Record<string, string> {
  const found: Record<string, string> = {
    SEARCH_TOKEN,
    CURSOR_SECRET,
    SESSION_SECRET,
    WRONG_SERVICE_KEY,
    'SEARCH_TOKEN (base64)': b64(SEARCH_TOKEN),
    'CURSOR_SECRET (base64)': b64(CURSOR_SECRET),
    'SESSION_SECRET (base64url)': b64url(SESSION_SECRET),
  };
  for (const kind of KINDS) {
    const { email, apiKey, password } = u.chat.credentials(kind);
    found[`${kind} API key`] = apiKey;
    found[`${kind} Basic auth`] = b64(`${email}:${apiKey}`);
    found[`${kind} API key (base64)`] = b64(apiKey);
    if (password !== null) {
      found[`${kind} password`] = password;
      found[`${kind} password (form-encoded)`] = new URLSearchParams({ password }).toString();
      found[`${kind} password Basic auth`] = b64(`${email}:${password}`);
    }
  }
  found['wrong service key Basic auth'] = b64(
    `${u.chat.credentials('administrator').email}:${WRONG_SERVICE_KEY}`,
  );
  return found;
}

type Scenario = (gw: TestGateway, u: Upstreams) => Promise<request.Response[]>;

/**
 * A chat server whose error text echoes the Authorization header it was sent, as Zulip's own
 * "Bad credentials" pages and many proxies do: `Basic base64(email:key)` reaches the gateway.
 */
const echoAuthorization = (status: number, code: string): Fault => ({
  kind: 'echo',
  status,
  header: 'authorization',
  body: JSON.stringify({ result: 'error', msg: 'Bad credentials: {header}', code }),
});

const post = (gw: TestGateway, path: string, body: unknown) =>
  request(gw.app)
    .post(path)
    .set(BROWSER_HEADERS)
    .send(body as object);
const loginAs = (gw: TestGateway, u: Upstreams, kind: CredentialKind, password?: string) => {
  const creds = u.chat.credentials(kind);
  return post(gw, '/api/auth/login', { email: creds.email, password: password ?? creds.password });
};

interface Case {
  name: string;
  mode: 'service' | 'session';
  env?: Record<string, string>;
  run: Scenario;
}

const SCENARIOS: Case[] = [
  {
    name: 'search successes, cache hits, paging and the redirect proxy',
    mode: 'service',
    run: async (gw) => {
      const first = await request(gw.app).get('/api/search?q=headphones&k=2&sort=price_asc');
      const next = (first.body as { next: string }).next;
      const offer = /"(http:\/\/[^"]+\/v1\/url\?[^"]+)"/.exec(first.text)?.[1];
      expect(offer).toBeDefined();
      return [
        first,
        await request(gw.app).get('/api/search?q=headphones&k=2&sort=price_asc'),
        await request(gw.app).get('/api/search?q=lamp').set('Accept', 'application/ld+json'),
        await request(gw.app).get(next),
        await request(gw.app).get(`/api/search/url${new URL(offer!).search}`),
      ];
    },
  },
  {
    name: 'search validation errors and forged cursors',
    mode: 'service',
    run: async (gw) => [
      await request(gw.app).get('/api/search'),
      await request(gw.app).get('/api/search?q=a&k=0x5'),
      await request(gw.app).get('/api/search?cursor=forged.cursor'),
      await request(gw.app).get(`/api/search?cursor=${'A'.repeat(5000)}`),
      await request(gw.app).get('/api/search?q=a').set('Accept', 'image/png'),
      await request(gw.app).get('/api/nothing'),
    ],
  },
  {
    name: 'search upstream faults, including a service that echoes the token back',
    mode: 'service',
    run: async (gw, u) => {
      const echo = JSON.stringify({ error: `bad token ${SEARCH_TOKEN}` });
      const faults = [
        { kind: 'reset' },
        { kind: 'malformed' },
        { kind: 'truncated' },
        { kind: 'status', status: 500, body: echo },
        { kind: 'status', status: 401, body: echo },
        { kind: 'status', status: 400, body: echo },
        { kind: 'status', status: 429, body: echo, headers: { 'retry-after': '3' } },
        { kind: 'delay', ms: 2500 },
      ] as const;
      const responses: request.Response[] = [];
      for (const [i, fault] of faults.entries()) {
        u.search.faults.clear();
        // Persistent, so a retry of the idempotent read meets the same fault.
        u.search.faults.add({ fault });
        responses.push(await request(gw.app).get(`/api/search?q=fault${i}`));
      }
      // The exact statuses are the fault tests' business; here every answer must be an error.
      for (const res of responses) expect(res.status).toBeGreaterThanOrEqual(429);
      return responses;
    },
  },
  {
    name: 'chat successes and errors in service mode',
    mode: 'service',
    run: async (gw) => [
      await request(gw.app).get('/api/chat/drafts'),
      await request(gw.app).get('/api/chat/channel-folders?include_archived=true'),
      await request(gw.app).get('/api/chat/users/marie@acme.test'),
      await request(gw.app).get('/api/chat/users/nobody@acme.test'),
      await post(gw, '/api/chat/users/4/status', { status_text: 'canary check' }),
      await post(gw, '/api/chat/users/4/status', { status_text: 'x'.repeat(61) }),
      await post(gw, '/api/chat/users/4/status', { emoji_name: 'no_such_emoji' }),
      await request(gw.app).delete('/api/chat/emoji/no_such_emoji').set(BROWSER_HEADERS),
      await request(gw.app).post('/api/chat/users/4/status').send({ status_text: 'no csrf' }),
    ],
  },
  {
    name: 'chat upstream faults in service mode',
    mode: 'service',
    run: async (gw, u) => {
      const faults = [
        { kind: 'reset' },
        { kind: 'malformed' },
        { kind: 'status', status: 500 },
        {
          kind: 'status',
          status: 401,
          body: '{"result":"error","msg":"Invalid API key","code":"INVALID_API_KEY"}',
        },
      ] as const;
      const responses: request.Response[] = [];
      for (const fault of faults) {
        u.chat.faults.clear();
        u.chat.faults.add({ fault });
        responses.push(await request(gw.app).get('/api/chat/drafts'));
      }
      u.chat.faults.clear();
      u.chat.rateLimitNext(4);
      responses.push(await request(gw.app).get('/api/chat/drafts'));
      for (const res of responses) expect(res.status).toBeGreaterThanOrEqual(429);
      return responses;
    },
  },
  {
    name: 'logins that work and fail, a session in use, a session the server stops accepting, logout',
    mode: 'session',
    run: async (gw, u) => {
      const responses = [
        await loginAs(gw, u, 'member', 'wrong-password'),
        await loginAs(gw, u, 'deactivated'),
        await post(gw, '/api/auth/login', {
          email: u.chat.credentials('bot').email,
          api_key: u.chat.credentials('bot').apiKey,
        }),
        await post(gw, '/api/auth/login', {
          email: u.chat.credentials('guest').email,
          api_key: 'wrongKey0123456789',
        }),
        await request(gw.app)
          .post('/api/auth/login')
          .set({ Origin: 'https://evil.test', 'X-CSRF': '1' })
          .send({
            email: u.chat.credentials('owner').email,
            password: u.chat.credentials('owner').password,
          }),
      ];
      const ok = await loginAs(gw, u, 'member');
      const cookie = (ok.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
      responses.push(
        ok,
        await request(gw.app).get('/api/auth/session').set('Cookie', cookie),
        await request(gw.app).get('/api/chat/drafts').set('Cookie', cookie),
        await request(gw.app).get('/api/chat/users/marie@acme.test').set('Cookie', cookie),
      );
      u.chat.faults.add({
        fault: {
          kind: 'status',
          status: 401,
          body: '{"result":"error","msg":"Invalid API key","code":"INVALID_API_KEY"}',
        },
        times: 1,
      });
      responses.push(
        await request(gw.app).get('/api/chat/drafts').set('Cookie', cookie),
        await request(gw.app).get('/api/chat/drafts').set('Cookie', cookie),
      );
      const admin = await loginAs(gw, u, 'administrator');
      const adminCookie = (admin.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
      u.chat.faults.add({ fault: { kind: 'reset' }, times: 1 });
      responses.push(
        admin,
        await loginAs(gw, u, 'owner'),
        await request(gw.app)
          .post('/api/auth/logout')
          .set({ ...BROWSER_HEADERS, Cookie: adminCookie, 'Content-Type': 'application/json' })
          .send('{}'),
      );
      expect(responses.map((r) => r.status)).toEqual([
        401, 401, 200, 401, 403, 200, 200, 200, 200, 401, 401, 200, 502, 204,
      ]);
      return responses;
    },
  },
  {
    name: 'a chat server whose errors echo the Authorization header of the service account',
    mode: 'service',
    run: async (gw, u) => {
      u.chat.faults.add({
        fault: echoAuthorization(400, 'BAD_REQUEST'),
        pathPrefix: '/api/v1/users/',
      });
      u.chat.faults.add({
        fault: echoAuthorization(403, 'BAD_REQUEST'),
        pathPrefix: '/api/v1/realm/',
      });
      u.chat.faults.add({
        fault: echoAuthorization(401, 'UNAUTHORIZED'),
        pathPrefix: '/api/v1/drafts',
      });
      const responses = [
        await request(gw.app).get('/api/chat/users/marie@acme.test'),
        await post(gw, '/api/chat/users/4/status', { status_text: 'echo' }),
        await request(gw.app).delete('/api/chat/emoji/some_emoji').set(BROWSER_HEADERS),
        await request(gw.app).get('/api/chat/drafts'),
      ];
      expect(responses.map((r) => r.status)).toEqual([400, 400, 400, 502]);
      // The echo did reach the gateway: the browser sees the message with the credential cut out.
      expect((responses[0]!.body as { detail: string }).detail).toBe(
        'Bad credentials: Basic [redacted]',
      );
      return responses;
    },
  },
  {
    name: 'a chat server whose errors echo the Authorization header of a logged-in user',
    mode: 'session',
    run: async (gw, u) => {
      const cookie = await u.login(gw, 'member');
      u.chat.faults.add({
        fault: echoAuthorization(400, 'BAD_REQUEST'),
        pathPrefix: '/api/v1/users/marie',
      });
      u.chat.faults.add({
        fault: echoAuthorization(401, 'UNAUTHORIZED'),
        pathPrefix: '/api/v1/users/me',
      });
      const bot = u.chat.credentials('bot');
      const responses = [
        await request(gw.app).get('/api/chat/users/marie@acme.test').set('Cookie', cookie),
        // An API-key login is checked with GET /users/me, under the key being logged in with.
        await post(gw, '/api/auth/login', { email: bot.email, api_key: bot.apiKey }),
      ];
      expect(responses.map((r) => r.status)).toEqual([400, 401]);
      for (const res of responses) {
        expect((res.body as { detail: string }).detail).toBe('Bad credentials: Basic [redacted]');
      }
      return responses;
    },
  },
  {
    name: 'a service account whose key the chat server refuses',
    mode: 'service',
    env: { CHAT_API_KEY: WRONG_SERVICE_KEY },
    run: async (gw) => {
      const responses = [
        await request(gw.app).get('/api/chat/drafts'),
        await post(gw, '/api/chat/users/4/status', { status_text: 'x' }),
      ];
      expect(responses.map((r) => r.status)).toEqual([502, 502]);
      return responses;
    },
  },
];

describe('canary secrets', () => {
  it.each(SCENARIOS.map((c) => [c.name, c.mode, c] as const))(
    'when %s (%s mode), then no secret appears in any response header, body or log line',
    async (_name, mode, { env = {}, run }) => {
      const gw =
        mode === 'session'
          ? await upstreams.sessionGateway({ LOGIN_RATE_LIMIT_PER_CLIENT: '100', ...env })
          : await upstreams.serviceGateway('administrator', { SEARCH_TIMEOUT_MS: '800', ...env });
      const responses = await run(gw, upstreams);
      expect(responses.length).toBeGreaterThan(1);
      const leaks: string[] = [];
      for (const [label, secret] of Object.entries(secrets(upstreams))) {
        responses.forEach((res, i) => {
          if (JSON.stringify(res.headers).includes(secret))
            leaks.push(`${label} in headers of #${i}`);
          if (res.text.includes(secret)) leaks.push(`${label} in body of #${i}`);
        });
        if (gw.logs.text().includes(secret)) leaks.push(`${label} in the log`);
      }
      expect(leaks).toEqual([]);
      for (const res of responses) expect(res.headers['www-authenticate']).toBeUndefined();
      // Every request left its log line, so the log check above saw them all.
      expect(gw.logs.lines().filter((l) => l['req'] !== undefined).length).toBeGreaterThanOrEqual(
        responses.length,
      );
    },
  );
});

describe('every secret the schema marks', () => {
  const redis = new URL(TEST_REDIS_URL);
  const canaries = secretCanaries({
    redis: `redis://${redis.host}`,
    otlp: 'https://collector.test:4318',
  });
  const { REDIS_URL: _url, REDIS_PASSWORD: _password, ...others } = canaries.env;
  /** REDIS_PASSWORD goes with a cluster or Sentinel, never with REDIS_URL: two start-ups. */
  const REDIS_SETUPS: [string, Record<string, string>][] = [
    ['REDIS_URL', { REDIS_URL: canaries.env['REDIS_URL']! }],
    [
      'REDIS_CLUSTER_NODES and REDIS_PASSWORD',
      {
        REDIS_CLUSTER_NODES: redis.host,
        REDIS_USERNAME: 'gateway',
        REDIS_PASSWORD: canaries.env['REDIS_PASSWORD']!,
      },
    ],
  ];

  it('when the canaries are drawn, then every marked variable holds one in one of the start-ups', () => {
    const given = new Set([
      ...Object.keys(others),
      ...REDIS_SETUPS.flatMap(([, env]) => Object.keys(env)),
    ]);
    expect(Object.keys(canaries.env).filter((name) => !given.has(name))).toEqual([]);
    expect(Object.keys(canaries.secrets).length).toBeGreaterThanOrEqual(12);
  });

  it.each(REDIS_SETUPS)(
    'when each holds a canary (%s), then none appears, raw, encoded or inside Basic, in config:check, in the log of a start-up and a few requests, or in any answer',
    async (_setup, redisEnv) => {
      const admin = upstreams.chat.credentials('administrator');
      const search = createSearchSimulator({ clientToken: canaries.env['SEARCH_CLIENT_TOKEN']! });
      await search.listen();
      const env = {
        ...others,
        ...redisEnv,
        CHAT_AUTH_MODE: 'service',
        CHAT_EMAIL: admin.email,
        SEARCH_TIMEOUT_MS: '2000',
      };
      const checked = describeConfig({
        ...env,
        SEARCH_BASE_URL: search.origin,
        CHAT_BASE_URL: upstreams.chat.origin,
      });
      const gw = await createTestGateway({
        searchOrigin: search.origin,
        chatOrigin: upstreams.chat.origin,
        env,
      });
      const responses: request.Response[] = [];
      try {
        const first = await request(gw.app).get('/api/search?q=headphones&k=2');
        expect(first.status).toBe(200);
        responses.push(
          first,
          await request(gw.app).get((first.body as { next: string }).next),
          await request(gw.app).get('/api/bootstrap'),
          await request(gw.app).get('/readyz'),
          await request(gw.app)
            .get('/metrics')
            .set('Authorization', `Bearer ${canaries.env['METRICS_TOKEN']!}`),
          await request(gw.app)
            .get('/metrics')
            .set('Authorization', 'Bearer wrong-token-0123456789'),
          // The chat server does not know the canary key: the gateway's own credentials fail.
          await request(gw.app).get('/api/chat/drafts'),
        );
        upstreams.chat.faults.add({ fault: echoAuthorization(400, 'BAD_REQUEST') });
        const echoed = await request(gw.app).get('/api/chat/users/marie@acme.test');
        expect((echoed.body as { detail: string }).detail).toBe(
          'Bad credentials: Basic [redacted]',
        );
        upstreams.chat.faults.clear();
        upstreams.chat.faults.add({ fault: echoAuthorization(401, 'UNAUTHORIZED') });
        responses.push(echoed, await request(gw.app).get('/api/chat/channel-folders'));
        expect(responses.map((r) => r.status)).toEqual([
          200, 200, 200, 200, 200, 401, 502, 400, 502,
        ]);
      } finally {
        await gw.close();
        await search.close();
      }
      const places: Record<string, string> = {
        'config:check': checked,
        'the log': gw.logs.text(),
      };
      responses.forEach((res, i) => {
        places[`headers of #${i}`] = JSON.stringify(res.headers);
        places[`body of #${i}`] = res.text;
      });
      expect(findLeaks(canaries.secrets, places, admin.email)).toEqual([]);
      expect(gw.logs.lines().length).toBeGreaterThan(responses.length);
    },
  );

  it('when a configured secret is written to a log line in any form, then the line carries none of them', () => {
    const secret = canaries.env['CURSOR_SECRET']!;
    const logs = createLogCapture('debug', [secret]);
    logs.logger.info(
      {
        nested: { deep: { value: secret } },
        url: `https://x.test/?k=${encodeURIComponent(secret)}`,
      },
      `form ${new URLSearchParams({ s: secret }).toString()} quoted "${secret}"`,
    );
    logs.logger.warn({ err: new Error(`refused ${secret}`) }, 'failed');
    expect(logs.lines()).toHaveLength(2);
    const text = logs.text();
    expect(Object.entries(leakForms(secret)).filter(([, form]) => text.includes(form))).toEqual([]);
    expect(text).toContain('[redacted]');
  });
});
