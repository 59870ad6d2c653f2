import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { toRepresentation } from '../../src/cache/cache-entry.js';
import { createEventHub } from '../../src/features/events/event-hub.js';
import { HEAP_PER_STREAM, streamsAllowed } from '../../src/features/events/streams-allowed.js';

/**
 * A response whose reader stopped reading: nothing it is given is ever flushed, so its unsent
 * bytes grow with every write, as a socket's do once the peer's window and the kernel's buffers
 * are full. The hub sees only what a ServerResponse shows it: writableLength, write, end,
 * destroy and 'close'.
 */
class StalledResponse extends Writable {
  readonly heads: number[] = [];
  constructor() {
    super({ write: () => undefined }); // the callback is never called: nothing drains
  }
  writeHead(status: number) {
    this.heads.push(status);
    return this;
  }
}

const list = (name: string, padding = 0) =>
  toRepresentation(
    { channel_folders: [{ id: 1, name, padding: 'x'.repeat(padding) }] },
    'application/json; charset=utf-8',
  );

function hub(maxUnsentBytes: number) {
  let current = list('first');
  const events = createEventHub({
    read: () => Promise.resolve(current),
    retryMs: 3000,
    heartbeatMs: 60_000,
    maxUnsentBytes,
    sessionCheckMs: 60_000,
    logger: pino({ level: 'silent' }),
  });
  return { events, change: (next: ReturnType<typeof list>) => (current = next) };
}

const open = (events: ReturnType<typeof createEventHub>, res: StalledResponse) =>
  events.open(res as unknown as ServerResponse, {
    variant: 'active',
    lastEventId: undefined,
    current: () => Promise.resolve(list('first')),
  });

describe('event hub bounds', () => {
  it('when a reader stops reading, then each such stream is dropped once its unsent bytes would pass the bound, never buffered past it', async () => {
    const { events, change } = hub(4096);
    const stalled = new StalledResponse();
    const other = new StalledResponse();
    open(events, stalled);
    open(events, other);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.size).toBe(2);
    // One change of 3 KiB fits under the bound; the next one would pass it.
    change(list('second', 3000));
    await events.changed('active');
    expect(events.size).toBe(2);
    const closed = new Promise((resolve) => stalled.once('close', resolve));
    change(list('third', 3000));
    await events.changed('active');
    await closed;
    expect(stalled.destroyed).toBe(true);
    expect(stalled.writableLength).toBeLessThanOrEqual(4096);
    expect(events.status().closed.slow).toBe(2);
    expect(events.size).toBe(0);
  });

  it('when the same bytes are read again, then nothing is sent', async () => {
    const { events, change } = hub(1 << 20);
    const res = new StalledResponse();
    open(events, res);
    await new Promise((resolve) => setImmediate(resolve));
    const sent = events.status().sent['channel_folders'];
    change(list('first'));
    await events.changed('active');
    expect(events.status().sent['channel_folders']).toBe(sent);
    change(list('renamed'));
    await events.changed('active');
    expect(events.status().sent['channel_folders']).toBe(sent! + 1);
    events.closeAll('shutdown');
    expect(events.status().closed.shutdown).toBe(1);
  });
});

describe('how many streams an instance holds', () => {
  const MB = 1024 * 1024;
  it('when EVENTS_MAX_STREAMS is unset, then a quarter of the connection cap', () => {
    expect(
      streamsAllowed({ configured: undefined, maxConnections: 4096, heapLimitBytes: 4096 * MB }),
    ).toEqual({ max: 1024, wanted: 1024, lowered: false });
  });
  it('when it is more than half of the heap holds (the production 128 MB cap: 176 MB in all), then it is lowered to what fits', () => {
    const allowed = streamsAllowed({
      configured: 12000,
      maxConnections: 19000,
      heapLimitBytes: 176 * MB,
    });
    expect(allowed).toEqual({
      max: Math.floor((88 * MB) / HEAP_PER_STREAM),
      wanted: 12000,
      lowered: true,
    });
  });
  it('when it is not below MAX_CONNECTIONS, then it is a configuration error', () => {
    expect(
      streamsAllowed({ configured: 5000, maxConnections: 5000, heapLimitBytes: 4096 * MB }),
    ).toHaveProperty('error');
  });
});
