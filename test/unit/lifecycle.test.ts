import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLifecycle } from '../../src/lifecycle/lifecycle.js';
import { createLogCapture } from '../helpers/log-capture.js';

describe('the lifecycle: each part registers its start and close where it is made', () => {
  it('when the gateway stops, then parts close in the reverse order they were made, each awaited before the next', async () => {
    const lifecycle = createLifecycle({ logger: pino({ level: 'silent' }) });
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
    const lifecycle = createLifecycle({ logger: logs.logger });
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
    const lifecycle = createLifecycle({ logger: pino({ level: 'silent' }) });
    let closes = 0;
    lifecycle.onClose('redis', () => void (closes += 1));
    await Promise.all([lifecycle.close({ force: false }), lifecycle.close({ force: true })]);
    await lifecycle.close({ force: false });
    expect(closes).toBe(1);
  });

  it('when the gateway starts, then every part starts together and one that fails does not stop the others', async () => {
    const lifecycle = createLifecycle({ logger: pino({ level: 'silent' }) });
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

/** A promise the test settles when it chooses. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('the lifecycle: a stop in phases, pre-close, drain, close', () => {
  afterEach(() => void vi.useRealTimers());

  it('when a stop begins, then every pre-close hook runs at once in registration order, and nothing drains before the drain delay is over and what they began has ended', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const lifecycle = createLifecycle({ logger: pino({ level: 'silent' }), drainDelayMs: 5000 });
    const events: string[] = [];
    const streams = deferred();
    lifecycle.onPreClose('readiness', () => void events.push('readiness draining'));
    lifecycle.onPreClose('event streams', ({ drainDelayMs }) => {
      events.push(`streams ending within ${drainDelayMs} ms`);
      return streams.promise;
    });
    lifecycle.onPreClose('listener', () => void events.push('Connection: close'));
    lifecycle.onDrain('listener', () => void events.push('listener closed'));
    const stopped = lifecycle.close();
    // All three began at once: none waited for the streams.
    expect(events).toEqual([
      'readiness draining',
      'streams ending within 5000 ms',
      'Connection: close',
    ]);
    await vi.advanceTimersByTimeAsync(4999);
    streams.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(events).not.toContain('listener closed');
    await vi.advanceTimersByTimeAsync(1);
    await expect(stopped).resolves.toBe(true);
    expect(events.at(-1)).toBe('listener closed');
  });

  it('when the drain delay is over but a pre-close hook has not ended, then the drain waits for it', async () => {
    const lifecycle = createLifecycle({ logger: pino({ level: 'silent' }) });
    const events: string[] = [];
    const streams = deferred();
    lifecycle.onPreClose('event streams', () => streams.promise);
    lifecycle.onDrain('listener', () => void events.push('listener closed'));
    const stopped = lifecycle.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual([]);
    streams.resolve();
    await expect(stopped).resolves.toBe(true);
    expect(events).toEqual(['listener closed']);
  });

  it('when it drains, then the drain hooks run the last registered first, each awaited, and only then the close hooks, unforced', async () => {
    const lifecycle = createLifecycle({ logger: pino({ level: 'silent' }), timeoutMs: 60_000 });
    const events: string[] = [];
    const hook = (name: string) => async () => {
      events.push(`${name} begins`);
      await new Promise((resolve) => setImmediate(resolve));
      events.push(`${name} done`);
    };
    lifecycle.onClose('redis', ({ force }) => void events.push(`redis closed, force ${force}`));
    lifecycle.onDrain('cache loader', hook('loader settling'));
    lifecycle.onClose(
      'chat upstream',
      ({ force }) => void events.push(`pool closed, force ${force}`),
    );
    lifecycle.onDrain('listener', hook('listener closing'));
    await expect(lifecycle.close()).resolves.toBe(true);
    expect(events).toEqual([
      'listener closing begins',
      'listener closing done',
      'loader settling begins',
      'loader settling done',
      'pool closed, force false',
      'redis closed, force false',
    ]);
  });

  it('when the deadline passes while a drain hook is under way, then it and those after it are cut, the stop is not clean, and every close hook is forced', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const lifecycle = createLifecycle({
      logger: pino({ level: 'silent' }),
      drainDelayMs: 1000,
      timeoutMs: 3000,
    });
    const events: string[] = [];
    lifecycle.onClose('redis', ({ force }) => void events.push(`redis closed, force ${force}`));
    lifecycle.onDrain(
      'cache loader',
      () => new Promise(() => undefined),
      () => void events.push('loader cut'),
    );
    lifecycle.onDrain(
      'listener',
      () => new Promise(() => undefined), // a request that never ends
      () => void events.push('connections cut'),
    );
    const stopped = lifecycle.close();
    await vi.advanceTimersByTimeAsync(2999);
    expect(events).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await expect(stopped).resolves.toBe(false);
    expect(events).toEqual(['loader cut', 'connections cut', 'redis closed, force true']);
  });

  it('when a close hook outlasts the deadline after a clean drain, then the stop moves on without it, the rest forced, and the stop is still clean', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const lifecycle = createLifecycle({ logger: pino({ level: 'silent' }), timeoutMs: 3000 });
    const events: string[] = [];
    lifecycle.onClose('redis', ({ force }) => void events.push(`redis closed, force ${force}`));
    lifecycle.onClose('chat events', () => new Promise(() => undefined));
    const stopped = lifecycle.close();
    await vi.advanceTimersByTimeAsync(2999);
    expect(events).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await expect(stopped).resolves.toBe(true);
    expect(events).toEqual(['redis closed, force true']);
  });

  it('when a pre-close or drain hook fails, then it is logged by name and phase and the stop goes on', async () => {
    const logs = createLogCapture();
    const lifecycle = createLifecycle({ logger: logs.logger });
    const events: string[] = [];
    lifecycle.onPreClose('event streams', () => Promise.reject(new Error('hub gone')));
    lifecycle.onDrain('cache loader', () => {
      throw new Error('no loader');
    });
    lifecycle.onDrain('listener', () => void events.push('listener closed'));
    lifecycle.onClose('redis', () => void events.push('redis closed'));
    await expect(lifecycle.close()).resolves.toBe(true);
    expect(events).toEqual(['listener closed', 'redis closed']);
    const failures = logs.lines().filter((line) => line['msg'] === 'a resource failed to close');
    expect(failures.map((line) => [line['resource'], line['phase']])).toEqual([
      ['event streams', 'pre-close'],
      ['cache loader', 'drain'],
    ]);
  });
});
