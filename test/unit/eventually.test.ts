import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { createTestClock } from '../helpers/test-clock.js';

describe('eventually', () => {
  it('when the check holds at once, then it resolves with its answer', async () => {
    await expect(eventually(() => 'ready', { what: 'nothing' })).resolves.toBe('ready');
  });

  it('when the check holds after a few tries, then it resolves with the first answer that is not false, undefined or null', async () => {
    let tries = 0;
    const answers = [false, undefined, null, 0, 'late'] as const;
    const answer = await eventually(() => answers[tries++], { what: 'the fourth try' });
    expect(answer).toBe(0);
    expect(tries).toBe(4);
  });

  it('when an event it listens to fires, then it checks again at once, whatever its back-off', async () => {
    const events = new EventEmitter();
    let ready = false;
    let checks = 0;
    // A back-off far longer than the test: only the event can wake the check.
    const waiting = eventually(
      () => {
        checks += 1;
        return ready;
      },
      { what: 'the event', on: [[events, 'changed']], intervalMs: 60_000 },
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(checks).toBe(1);
    ready = true;
    events.emit('changed');
    await expect(waiting).resolves.toBe(true);
    expect(checks).toBe(2);
    expect(events.listenerCount('changed')).toBe(0);
  });

  it('when the check throws, then the wait fails with that error at once', async () => {
    const failure = new Error('a broken assertion');
    await expect(
      eventually(
        () => {
          throw failure;
        },
        { what: 'anything', timeoutMs: 60_000 },
      ),
    ).rejects.toBe(failure);
  });

  it('when the check never holds, then it fails after timeoutMs with a message naming what it waited for', async () => {
    await expect(eventually(() => false, { what: 'the moon', timeoutMs: 50 })).rejects.toThrow(
      'timed out after 50 ms waiting for the moon',
    );
  });
});

describe('a test clock', () => {
  it('when advanced, then now() moves by that much and never by itself', () => {
    const clock = createTestClock(1000);
    expect(clock.now()).toBe(1000);
    clock.advance(250);
    expect(clock.now()).toBe(1250);
    expect(() => clock.advance(-1)).toThrow('only moves forward');
  });
});
