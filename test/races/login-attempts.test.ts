import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { startHoldProxy, type HoldProxy } from '../harness/hold-proxy.js';
import { BROWSER_HEADERS, createTestGateway, type TestGateway } from '../helpers/test-gateway.js';
import { uniquePrefix } from '../helpers/test-redis.js';
import { useUpstreams } from '../helpers/upstreams.js';

/**
 * Contract section 6, Limits: an attempt counts from the moment it starts, so however many wrong
 * passwords arrive at once, at most the limit's number reach the chat server per window. The
 * chat server's answers are held (hold-proxy.ts) until every attempt has either reached it or
 * been answered: all of them are in flight together, by construction rather than by luck.
 */
const upstreams = useUpstreams();
const LIMIT = 10; // LOGIN_RATE_LIMIT_PER_CLIENT's default
const FETCH_API_KEY = /POST \/api\/v1\/fetch_api_key /;

let proxy: HoldProxy | undefined;
const gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gw) => gw.close()));
  await proxy?.close();
  proxy = undefined;
});

/** Gateways whose chat calls pass the proxy; `redis` ones share one key prefix (one fleet). */
async function fleet(size: number, cache: 'memory' | 'redis'): Promise<TestGateway[]> {
  const { hostname, port } = new URL(upstreams.chat.origin);
  proxy = await startHoldProxy({ host: hostname, port: Number(port) });
  const prefix = uniquePrefix();
  for (let i = 0; i < size; i += 1) {
    gateways.push(
      await createTestGateway({
        searchOrigin: upstreams.search.origin,
        chatOrigin: `http://${proxy.host}:${proxy.port}`,
        cache,
        env: { SESSION_COOKIE_SECURE: 'false', REDIS_KEY_PREFIX: prefix },
      }),
    );
  }
  return gateways.slice();
}

/** Sends `n` logins at once, round robin over the fleet, with the chat server's answers held. */
async function loginsAtOnce(fleet_: TestGateway[], n: number, password: (i: number) => string) {
  const { email } = upstreams.chat.credentials('member');
  const held = proxy!;
  held.hold();
  let answered = 0;
  const sent = Array.from({ length: n }, (_, i) =>
    request(fleet_[i % fleet_.length]!.app)
      .post('/api/auth/login')
      .set(BROWSER_HEADERS)
      .send({ email, password: password(i) })
      .then((res) => {
        answered += 1;
        held.poke();
        return res;
      }),
  );
  // Every attempt has either reached the chat server or been answered without it.
  await held.until(() => held.count(FETCH_API_KEY) + answered >= n);
  held.release();
  return Promise.all(sent);
}

describe('login attempts at the same time', () => {
  it.each([
    ['one instance, in-process counters', 1, 'memory'],
    ['one instance on Redis', 1, 'redis'],
    ['two instances sharing Redis', 2, 'redis'],
  ] as const)(
    'when 25 wrong passwords arrive at once (%s), then at most the limit reach the chat server and the rest are 429 with Retry-After',
    async (_name, size, cache) => {
      const answers = await loginsAtOnce(await fleet(size, cache), 25, () => 'wrong');
      expect(proxy!.count(FETCH_API_KEY)).toBe(LIMIT);
      const statuses = answers.map((res) => res.status).sort();
      expect(statuses.filter((s) => s === 401)).toHaveLength(LIMIT);
      const refused = answers.filter((res) => res.status === 429);
      expect(refused).toHaveLength(25 - LIMIT);
      for (const res of refused) {
        expect((res.body as { code: string }).code).toBe('RATE_LIMITED');
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
    },
  );

  it('when a correct password comes with wrong ones inside the budget, then it logs in, and it costs nothing', async () => {
    const { password } = upstreams.chat.credentials('member');
    const gw = await fleet(1, 'redis');
    const answers = await loginsAtOnce(gw, 5, (i) => (i === 0 ? password! : 'wrong'));
    expect(answers.map((res) => res.status).sort()).toEqual([200, 401, 401, 401, 401]);
    // 4 failures counted; the success was given back: exactly 6 more wrong ones still reach
    // the chat server, the 7th is refused.
    const more = await loginsAtOnce(gw, 7, () => 'wrong');
    expect(more.filter((res) => res.status === 401)).toHaveLength(LIMIT - 4);
    expect(more.filter((res) => res.status === 429)).toHaveLength(1);
  });

  it('when the budget is spent, then even the right password is refused until the window ends', async () => {
    const { password } = upstreams.chat.credentials('member');
    const gw = await fleet(1, 'memory');
    await loginsAtOnce(gw, LIMIT, () => 'wrong');
    const [late] = await loginsAtOnce(gw, 1, () => password!);
    expect(late!.status).toBe(429);
    expect(proxy!.count(FETCH_API_KEY)).toBe(LIMIT);
  });
});
