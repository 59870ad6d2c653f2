import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHoldProxy, type HoldProxy } from '../harness/hold-proxy.js';
import { createLogCapture } from '../helpers/log-capture.js';
import {
  TEST_REDIS_URL,
  createInspector,
  deletePrefix,
  testRedisBreaker,
  uniquePrefix,
} from '../helpers/test-redis.js';
import { unreadBytes } from '../helpers/unread-bytes.js';

/*
 * REDIS_COMMAND_TIMEOUT_MS as each Redis use's breaker applies it (resilience/deadline.ts): a
 * reply that has arrived is taken even when the process was too busy to read it in time, and
 * only a Redis that has not answered fails the call. On a real Redis; the unanswered one
 * behind a proxy that holds its replies.
 *
 * Every deadline here starts with the command under test, on a client that is already
 * connected and has answered a PING: how fast a connection opens on a loaded machine is no
 * part of any verdict (issue 31, item 10).
 */

const DEADLINE_MS = 50;
/**
 * A bound on failure, never an assertion of speed: a reply that has not reached the socket by
 * then is not coming. A spinning process runs no timer, the test's own timeout included, so
 * the spin needs a bound of its own.
 */
const GIVE_UP_MS = 10_000;
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

/**
 * A connected client whose first PING has been answered, with `commandTimeout` in force only
 * from then on: ioredis reads that option as each command is sent (Redis#sendCommand), so the
 * connect, its ready check and the PING run under a generous one. The caller continues from
 * the PING's reply, that is in the loop's poll phase, as a gateway's handler does.
 */
async function client(options: { port?: number; commandTimeout: number }): Promise<Redis> {
  const url = new URL(TEST_REDIS_URL);
  const redis = new Redis({
    host: url.hostname,
    port: options.port ?? Number(url.port),
    keyPrefix: prefix,
    commandTimeout: GIVE_UP_MS,
    maxRetriesPerRequest: 0,
  });
  clients.push(redis);
  await redis.ping();
  redis.options.commandTimeout = options.commandTimeout;
  return redis;
}

function breaker() {
  return testRedisBreaker(createLogCapture().logger, { deadlineMs: DEADLINE_MS });
}

/**
 * Keeps the event loop from turning, as a burst of work on a busy process does, until two
 * things are true: the deadline of the command sent at `sentAt` has passed (twice over, so no
 * clock's rounding can put it in doubt), and its reply sits unread in `redis`'s socket. Both
 * are waited for, however long Redis (another process) takes on a loaded machine; when the
 * loop turns again, its timers run before its sockets are read, and the verdict is about a
 * reply that arrived and was read late.
 */
function busyUntilReplyWaits(redis: Redis, sentAt: number): void {
  for (;;) {
    const now = performance.now();
    if (now - sentAt > DEADLINE_MS * 2 && unreadBytes(redis.stream) > 0) return;
    if (now - sentAt > GIVE_UP_MS)
      throw new Error(`no reply reached the socket within ${GIVE_UP_MS} ms`);
  }
}

describe('Redis deadlines in a busy process', () => {
  it('when the process is busy past the deadline after Redis answered, then the answer is taken', async () => {
    const redis = await client({ commandTimeout: GIVE_UP_MS });
    const guarded = breaker();
    const sentAt = performance.now();
    const reply = guarded.run(() => redis.get('k'));
    busyUntilReplyWaits(redis, sentAt);
    await expect(reply).resolves.toBe('stored');
  });

  it("when ioredis's own timer has the same deadline, then the same answer is failed (why the breaker's is used)", async () => {
    const redis = await client({ commandTimeout: DEADLINE_MS });
    const sentAt = performance.now();
    const reply = redis.get('k');
    busyUntilReplyWaits(redis, sentAt);
    await expect(reply).rejects.toThrow('Command timed out');
  });

  it('when Redis does not answer, then the call fails at its deadline, counted by the breaker', async () => {
    const redis = await client({ port: proxy.port, commandTimeout: GIVE_UP_MS });
    const guarded = breaker();
    proxy.hold();
    const calls = Array.from({ length: 3 }, () => guarded.run(() => redis.get('k')));
    for (const call of calls)
      await expect(call).rejects.toThrow(`no answer within ${DEADLINE_MS} ms`);
    expect(guarded.state).toBe('open');
  });
});
