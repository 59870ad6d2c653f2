import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBreaker } from '../../src/resilience/circuit-breaker.js';
import { startHoldProxy, type HoldProxy } from '../harness/hold-proxy.js';
import { createLogCapture } from '../helpers/log-capture.js';
import {
  TEST_REDIS_URL,
  createInspector,
  deletePrefix,
  uniquePrefix,
} from '../helpers/test-redis.js';

/*
 * REDIS_COMMAND_TIMEOUT_MS as each Redis use's breaker applies it (resilience/deadline.ts): a
 * reply that has arrived is taken even when the process was too busy to read it in time, and
 * only a Redis that has not answered fails the call. On a real Redis; the unanswered one
 * behind a proxy that holds its replies.
 */

const DEADLINE_MS = 50;
const prefix = uniquePrefix();
const clients: Redis[] = [];
let proxy: HoldProxy;

beforeAll(async () => {
  const url = new URL(TEST_REDIS_URL);
  proxy = await startHoldProxy({ host: url.hostname, port: Number(url.port) });
  const inspector = createInspector();
  await inspector.set(`${prefix}k`, 'stored');
  inspector.disconnect();
});
afterEach(() => {
  proxy.release();
  for (const client of clients.splice(0)) client.disconnect();
});
afterAll(async () => {
  const cleaner = createInspector();
  await deletePrefix(cleaner, prefix);
  cleaner.disconnect();
  await proxy.close();
});

async function client(options: { port?: number; commandTimeout: number }): Promise<Redis> {
  const url = new URL(TEST_REDIS_URL);
  const redis = new Redis({
    host: url.hostname,
    port: options.port ?? Number(url.port),
    keyPrefix: prefix,
    commandTimeout: options.commandTimeout,
    maxRetriesPerRequest: 0,
  });
  clients.push(redis);
  await redis.ping();
  return redis;
}

function breaker() {
  const logs = createLogCapture();
  return createBreaker({
    name: 'redis-test',
    thresholds: { failurePercent: 50, minRequests: 3, windowSeconds: 5, openSeconds: 1 },
    logger: logs.logger,
    isFailure: () => true,
    openError: () => new Error('open'),
    deadlineMs: DEADLINE_MS,
  });
}

/**
 * Keeps the event loop from turning for `ms`, as a burst of work on a fresh process does: ten
 * deadlines, so that Redis (another process) has answered long before it ends, even on a
 * machine under load (`npm run test:loaded`).
 */
function busyFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spinning: the process is busy
  }
}

describe('Redis deadlines in a busy process', () => {
  it('when the process is busy past the deadline after Redis answered, then the answer is taken', async () => {
    const redis = await client({ commandTimeout: 10_000 });
    const guarded = breaker();
    const reply = guarded.run(() => redis.get('k'));
    busyFor(DEADLINE_MS * 10);
    await expect(reply).resolves.toBe('stored');
  });

  it("when ioredis's own timer has the same deadline, then the same answer is failed (why the breaker's is used)", async () => {
    const redis = await client({ commandTimeout: DEADLINE_MS });
    const reply = redis.get('k');
    busyFor(DEADLINE_MS * 10);
    await expect(reply).rejects.toThrow('Command timed out');
  });

  it('when Redis does not answer, then the call fails at its deadline, counted by the breaker', async () => {
    const redis = await client({ port: proxy.port, commandTimeout: 10_000 });
    const guarded = breaker();
    proxy.hold();
    const calls = Array.from({ length: 3 }, () => guarded.run(() => redis.get('k')));
    for (const call of calls)
      await expect(call).rejects.toThrow(`no answer within ${DEADLINE_MS} ms`);
    expect(guarded.state).toBe('open');
  });
});
