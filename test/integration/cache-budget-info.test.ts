import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { TEST_REDIS_URL, createInspector } from '../helpers/test-redis.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * CACHE_REDIS_MAX_BYTES where INFO is refused (contract section 1): an ACL user without +info
 * cannot read used_memory, so the budget cannot be enforced; a start-up warning says so, and
 * the cache still works.
 */

const upstreams = useUpstreams();

describe('the cache memory budget on a Redis that refuses INFO', () => {
  it('when the ACL user may not run INFO, then a warning says the budget is not enforced and answers are still cached', async () => {
    const admin = createInspector();
    const user = `bff-no-info-${randomUUID()}`;
    const password = randomUUID();
    await admin.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all', '-info');
    try {
      const url = new URL(TEST_REDIS_URL);
      url.username = user;
      url.password = password;
      const gw = await upstreams.gateway({ cache: { redisUrl: url.href } });
      await eventually(() => /CACHE_REDIS_MAX_BYTES is not enforced/.test(gw.logs.text()), {
        what: 'the warning that the budget is not enforced',
      });
      await request(gw.app).get('/api/search?q=lamp&k=3').expect(200);
      await gw.loader.settled();
      const hit = await request(gw.app).get('/api/search?q=lamp&k=3').expect(200);
      expect(hit.headers['x-cache']).toBe('HIT');
      // Said once, not on every reading.
      expect(gw.logs.text().match(/is not enforced/g)).toHaveLength(1);
    } finally {
      await admin.call('ACL', 'DELUSER', user);
      admin.disconnect();
    }
  });
});
