import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { spreadOver } from '../../src/features/events/spread-over.js';
import { createStreamSet, HEARTBEAT_SLICE } from '../../src/features/events/stream-set.js';

/** A response that takes every write at once and keeps what it was given. */
class RecordingResponse extends Writable {
  readonly writes: string[] = [];
  constructor() {
    super({
      write: (chunk: Buffer, _encoding, done) => {
        this.writes.push(chunk.toString());
        done();
      },
    });
  }
}

const HEARTBEAT_MS = 25_000;
const heartbeats = (responses: readonly RecordingResponse[]) =>
  responses.filter((res) => res.writes.includes(':\n\n')).length;

function streamSet() {
  return createStreamSet({
    maxUnsentBytes: 1 << 20,
    heartbeatMs: HEARTBEAT_MS,
    sessionCheckMs: 60_000,
    logger: pino({ level: 'silent' }),
  });
}

function openAll(set: ReturnType<typeof streamSet>, count: number): RecordingResponse[] {
  return Array.from({ length: count }, () => {
    const res = new RecordingResponse();
    set.add(res as unknown as ServerResponse, 'active', undefined);
    return res;
  });
}

describe('event stream heartbeats', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setImmediate', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('when streams sit idle for a beat, then each gets one comment, and a stream written to within half a beat gets none', () => {
    const set = streamSet();
    const [idle, busy] = openAll(set, 2) as [RecordingResponse, RecordingResponse];
    const streams = [...set.following('active')];
    vi.advanceTimersByTime(HEARTBEAT_MS - 1000);
    set.write(streams[1]!, Buffer.from('data: x\n\n'));
    vi.advanceTimersByTime(1000);
    expect(idle.writes).toEqual([':\n\n']);
    expect(busy.writes).toEqual(['data: x\n\n']);
    set.closeAll('shutdown');
  });

  it('when more streams are idle than one slice, then a beat writes a slice at a time and lets the event loop run between slices', () => {
    const set = streamSet();
    const responses = openAll(set, HEARTBEAT_SLICE * 2 + 10);
    vi.advanceTimersByTime(HEARTBEAT_MS);
    // The beat itself wrote one slice; the rest waits for the event loop's next turns.
    expect(heartbeats(responses)).toBe(HEARTBEAT_SLICE);
    vi.advanceTimersToNextTimer();
    expect(heartbeats(responses)).toBe(HEARTBEAT_SLICE * 2);
    vi.advanceTimersToNextTimer();
    expect(heartbeats(responses)).toBe(responses.length);
    expect(responses.every((res) => res.writes.length === 1)).toBe(true);
    set.closeAll('shutdown');
  });

  it('when a stream closes while a beat is between slices, then it gets no comment and the rest still do', () => {
    const set = streamSet();
    const responses = openAll(set, HEARTBEAT_SLICE + 2);
    const last = [...set.following('active')].at(-1)!;
    vi.advanceTimersByTime(HEARTBEAT_MS);
    set.close(last, 'client');
    vi.advanceTimersToNextTimer();
    expect(heartbeats(responses)).toBe(HEARTBEAT_SLICE + 1);
    expect(responses.at(-1)!.writes).toEqual([]);
    set.closeAll('shutdown');
  });
});

/** A seeded generator: the same "random" spread on every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('a stop spreads stream ends over the drain delay', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval', 'clearInterval', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('when 20 items are spread over 2000 ms, then each is done at its own moment, one per 100 ms slot, the first within the first slot and the last within the last, none at or after 2000 ms', async () => {
    const done: { item: number; atMs: number }[] = [];
    const items = Array.from({ length: 20 }, (_, i) => i);
    let finished = false;
    const spread = spreadOver(items, 2000, seeded(7), (item) =>
      done.push({ item, atMs: Date.now() }),
    ).then(() => (finished = true));
    const start = Date.now();
    expect(done).toEqual([]);
    await vi.advanceTimersByTimeAsync(1999);
    await spread;
    expect(finished).toBe(true);
    const moments = done.map((d) => d.atMs - start);
    expect(new Set(done.map((d) => d.item)).size).toBe(20);
    expect(new Set(moments).size).toBe(20);
    expect(Math.min(...moments)).toBeLessThan(100);
    expect(Math.max(...moments)).toBeGreaterThanOrEqual(1900);
    expect(Math.max(...moments)).toBeLessThan(2000);
    // Evenly spread: one end in each tenth of the window, two in each.
    for (let tenth = 0; tenth < 10; tenth += 1) {
      expect(moments.filter((m) => Math.floor(m / 200) === tenth)).toHaveLength(2);
    }
    // In random order, not the order the streams opened in.
    expect(done.map((d) => d.item)).not.toEqual(items);
  });

  it('when the drain delay is 0, then every stream ends at once', async () => {
    const set = streamSet();
    const responses = openAll(set, 5);
    const ended = responses.map((res) => new Promise((resolve) => res.once('finish', resolve)));
    await set.closeSpread(0, 'shutdown');
    expect(set.size).toBe(0);
    await Promise.all(ended);
    expect(set.status().closed.shutdown).toBe(5);
  });

  it('when a stream ends on its own during the spread, then it is counted once and the spread still resolves', async () => {
    const set = streamSet();
    openAll(set, 3);
    const first = [...set.following('active')][0]!;
    const spread = set.closeSpread(3000, 'shutdown');
    set.close(first, 'client');
    await vi.advanceTimersByTimeAsync(3000);
    await spread;
    expect(set.size).toBe(0);
    expect(set.status().closed).toMatchObject({ client: 1, shutdown: 2 });
  });
});

describe('streams per client', () => {
  it('when streams of a client open and end for any reason, then its count follows them back to 0, and refusals are counted by reason', () => {
    const set = streamSet();
    const open = (client: string | undefined) => {
      const res = new RecordingResponse();
      return set.add(res as unknown as ServerResponse, 'active', undefined, undefined, client);
    };
    const a1 = open('user:1');
    const a2 = open('user:1');
    const b = open('user:2');
    open(undefined);
    expect([set.heldBy('user:1'), set.heldBy('user:2')]).toEqual([2, 1]);
    set.close(a1, 'client');
    set.close(a1, 'client');
    expect(set.heldBy('user:1')).toBe(1);
    set.write(a2, Buffer.alloc((1 << 20) + 1)); // a reader that stopped: dropped as slow
    set.close(b, 'session');
    expect([set.heldBy('user:1'), set.heldBy('user:2')]).toEqual([0, 0]);
    set.refuse('per_client');
    set.refuse('per_client');
    set.refuse('draining');
    expect(set.status().refused).toEqual({ per_client: 2, full: 0, draining: 1 });
    set.closeAll('shutdown');
  });
});
