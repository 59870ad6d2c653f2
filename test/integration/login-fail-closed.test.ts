import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { startRedisServer } from '../harness/chaos-processes.js';
import { eventually } from '../helpers/eventually.js';
import { BROWSER_HEADERS } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Contract section 7, "Fail closed where safety needs it": while the Redis that holds the login
 * limit is unreachable, a login gets 503 before any call to the chat server. Counted in each
 * instance alone, the limit would let each instance's share of wrong passwords through, and a
 * right password would still show itself (503 from the session store against 401).
 */

const upstreams = useUpstreams();

describe('logins while the Redis of the login limit is unreachable', () => {
  it('when Redis is gone, then right and wrong passwords alike are 503 with Retry-After and no attempt reaches the chat server', async () => {
    const redis = await startRedisServer();
    try {
      const [a, b] = await Promise.all([
        upstreams.gateway({ cache: { redisUrl: redis.url } }),
        upstreams.gateway({ cache: { redisUrl: redis.url } }),
      ]);
      await redis.kill();
      const creds = upstreams.chat.credentials('member');
      const attempts = [
        ...Array.from({ length: 12 }, (_, i) => ({
          gw: i % 2 === 0 ? a : b,
          body: { email: creds.email, password: `wrong-${i}` },
        })),
        { gw: a, body: { email: creds.email, password: creds.password } },
        { gw: b, body: { email: creds.email, password: creds.password } },
      ];
      const answers = await Promise.all(
        attempts.map(({ gw, body }) =>
          request(gw.app).post('/api/auth/login').set(BROWSER_HEADERS).send(body),
        ),
      );
      for (const res of answers) {
        expect(res.status).toBe(503);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', source: 'gateway' });
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      expect(upstreams.chat.requests).toEqual([]);
    } finally {
      await redis.stop();
    }
  });

  it('when Redis is back, then logins work again', async () => {
    const redis = await startRedisServer();
    try {
      const gw = await upstreams.gateway({ cache: { redisUrl: redis.url } });
      await redis.restart();
      const creds = upstreams.chat.credentials('member');
      const login = () =>
        request(gw.app)
          .post('/api/auth/login')
          .set(BROWSER_HEADERS)
          .send({ email: creds.email, password: creds.password });
      // The connection comes back on its own (reconnects back off up to 2 s); meanwhile 503.
      await eventually(
        async () => {
          const { status } = await login();
          expect([200, 503]).toContain(status);
          return status === 200;
        },
        { what: 'a login to work again', timeoutMs: 15_000 },
      );
    } finally {
      await redis.stop();
    }
  }, 30_000);
});
