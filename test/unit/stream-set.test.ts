import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
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
