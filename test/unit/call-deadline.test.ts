import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallDeadline } from '../../src/upstreams/http/json-transport.js';

/*
 * The signal every upstream call is aborted by (json-transport.ts): an EventEmitter undici
 * takes in place of an AbortSignal. What the transport relies on: it aborts at its deadline
 * with the TimeoutError AbortSignal.timeout's would carry, follows an outer signal (a long-poll
 * stopped), lets go of both once cleared, and undici honours it before and during a body.
 */

describe('CallDeadline', () => {
  it('aborts once at its deadline with a TimeoutError', async () => {
    const deadline = new CallDeadline(20);
    let aborts = 0;
    deadline.on('abort', () => (aborts += 1));
    expect(deadline.aborted).toBe(false);
    await sleep(60);
    expect(deadline.aborted).toBe(true);
    expect(deadline.reason).toBeInstanceOf(DOMException);
    expect((deadline.reason as DOMException).name).toBe('TimeoutError');
    expect(aborts).toBe(1);
  });

  it('follows an outer signal, with its reason, and stops listening to it when cleared', () => {
    const outer = new AbortController();
    const deadline = new CallDeadline(10_000, outer.signal);
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(1);
    const stop = new Error('poll stopped');
    outer.abort(stop);
    expect(deadline.aborted).toBe(true);
    expect(deadline.reason).toBe(stop);
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0);

    const other = new AbortController();
    const cleared = new CallDeadline(10_000, other.signal);
    cleared.clear();
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
    other.abort();
    expect(cleared.aborted).toBe(false);
  });

  it('is aborted from the start when the outer signal already is', () => {
    const outer = new AbortController();
    outer.abort(new Error('already'));
    const deadline = new CallDeadline(10_000, outer.signal);
    expect(deadline.aborted).toBe(true);
    expect((deadline.reason as Error).message).toBe('already');
  });

  it('does not abort once cleared', async () => {
    const deadline = new CallDeadline(20);
    deadline.clear();
    await sleep(60);
    expect(deadline.aborted).toBe(false);
  });

  describe('as undici’s signal', () => {
    let server: Server;
    let pool: Pool;
    beforeAll(async () => {
      // `/slow`: headers only after 500 ms; `/dribble`: headers at once, the body never ends.
      server = createServer((req, res) => {
        if (req.url === '/slow') {
          setTimeout(() => res.end('{}'), 500).unref();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
    afterAll(async () => {
      await pool.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it('ends a call waiting for headers with its TimeoutError', async () => {
      const deadline = new CallDeadline(50);
      const error = await pool.request({ method: 'GET', path: '/slow', signal: deadline }).then(
        () => undefined,
        (e: unknown) => e,
      );
      // Without the abort the server's answer (at 500 ms) would have resolved the call.
      expect((error as DOMException).name).toBe('TimeoutError');
    });

    it('ends a body still arriving at the deadline', async () => {
      const deadline = new CallDeadline(50);
      const response = await pool.request({ method: 'GET', path: '/dribble', signal: deadline });
      const error = await response.body.text().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((error as DOMException).name).toBe('TimeoutError');
      expect(deadline.listenerCount('abort')).toBe(0);
    });

    it('refuses to start a call whose deadline has passed', async () => {
      const outer = new AbortController();
      outer.abort(new Error('gone'));
      const error = await pool
        .request({ method: 'GET', path: '/slow', signal: new CallDeadline(1_000, outer.signal) })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect((error as Error).message).toBe('gone');
    });
  });
});
