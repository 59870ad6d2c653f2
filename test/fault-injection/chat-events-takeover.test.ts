import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { startGatewayProcess, useChaosEnvironment, type GatewayProcess } from './harness.js';

/*
 * Contract section 6, Chat events: the lease holder is SIGKILLed (no release, no queue
 * deletion) and another instance takes the lease over within 15 s and registers its own queue.
 */

const env = useChaosEnvironment();

async function eventsState(gw: GatewayProcess): Promise<string | undefined> {
  const res = await fetch(`${gw.url}/readyz`);
  const body = (await res.json()) as { checks: Record<string, { state?: string }> };
  return body.checks['chat-events']?.state;
}

describe('the chat events lease', () => {
  // The lease expires 8 s after its last renewal and a standby instance tries every 2 s: a
  // takeover within 10 s by design. The wait below is a deadline, not a measurement.
  it('when the instance holding the queue is killed, then another takes the lease over and registers its own queue', async () => {
    env().reset();
    const shared = { CHAT_EVENTS: 'on', REDIS_KEY_PREFIX: `takeover:${randomUUID()}:` };
    const options = { upstreams: env().endpoints, redisUrl: env().redis.url, env: shared };
    const one = await startGatewayProcess(options);
    const two = await startGatewayProcess(options);
    try {
      await env().chat.received((r) => r.pathname === '/api/v1/events');
      const registrations = () =>
        env().chat.requests.filter((r) => r.pathname === '/api/v1/register').length;
      expect(registrations()).toBe(1);
      const [holder, other] = (await eventsState(one)) === 'polling' ? [one, two] : [two, one];
      expect(await eventsState(other)).toBe('standby');

      holder.signal('SIGKILL');
      await holder.exit;
      // Each request the chat server receives is a moment to look again.
      await eventually(() => registrations() === 2, {
        what: 'another instance to take the queue over',
        on: [[env().chat.server, 'request']],
        timeoutMs: 25_000,
      });
      expect(await eventsState(other)).toMatch(/registering|polling/);
    } finally {
      await Promise.all([one.dispose(), two.dispose()]);
    }
  }, 40_000);
});
