import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createLifecycle } from '../../src/lifecycle/lifecycle.js';
import { createLogCapture } from '../helpers/log-capture.js';

describe('the lifecycle: each part registers its start and close where it is made', () => {
  it('when the gateway stops, then parts close in the reverse order they were made, each awaited before the next', async () => {
    const lifecycle = createLifecycle(pino({ level: 'silent' }));
    const events: string[] = [];
    for (const name of ['redis', 'flights', 'upstream']) {
      lifecycle.onClose(name, async ({ force }) => {
        events.push(`${name} closing${force ? ' (forced)' : ''}`);
        await new Promise((resolve) => setImmediate(resolve));
        events.push(`${name} closed`);
      });
    }
    await lifecycle.close({ force: true });
    expect(events).toEqual([
      'upstream closing (forced)',
      'upstream closed',
      'flights closing (forced)',
      'flights closed',
      'redis closing (forced)',
      'redis closed',
    ]);
  });

  it('when one part fails to close, then it is logged by name and the parts made before it still close', async () => {
    const logs = createLogCapture();
    const lifecycle = createLifecycle(logs.logger);
    const closed: string[] = [];
    lifecycle.onClose('redis', () => void closed.push('redis'));
    lifecycle.onClose('search upstream', () => Promise.reject(new Error('pool refused')));
    lifecycle.onClose('chat upstream', () => {
      throw new Error('pool gone');
    });
    await lifecycle.close({ force: false });
    expect(closed).toEqual(['redis']);
    const failures = logs.lines().filter((line) => line['msg'] === 'a resource failed to close');
    expect(failures.map((line) => line['resource'])).toEqual(['chat upstream', 'search upstream']);
  });

  it('when a stop is asked for twice, then every part closes once', async () => {
    const lifecycle = createLifecycle(pino({ level: 'silent' }));
    let closes = 0;
    lifecycle.onClose('redis', () => void (closes += 1));
    await Promise.all([lifecycle.close({ force: false }), lifecycle.close({ force: true })]);
    await lifecycle.close({ force: false });
    expect(closes).toBe(1);
  });

  it('when the gateway starts, then every part starts together and one that fails does not stop the others', async () => {
    const lifecycle = createLifecycle(pino({ level: 'silent' }));
    const started: string[] = [];
    let releaseRedis!: () => void;
    lifecycle.onStart('redis', () => new Promise<void>((resolve) => (releaseRedis = resolve)));
    lifecycle.onStart('flights', () => Promise.reject(new Error('no subscriber')));
    lifecycle.onStart('event bus', () => Promise.resolve(started.push('event bus')));
    const starting = lifecycle.start();
    // All three were asked before the first finished.
    expect(started).toEqual(['event bus']);
    releaseRedis();
    await expect(starting).resolves.toBeUndefined();
  });
});
