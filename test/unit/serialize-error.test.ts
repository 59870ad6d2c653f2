import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/create-logger.js';
import { serializeError } from '../../src/logging/serialize-error.js';

/** The line a logger writes for `err`, parsed. */
function logged(err: unknown): Record<string, unknown> {
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  createLogger({ level: 'info', destination }).error({ err }, 'failed');
  return JSON.parse(text) as Record<string, unknown>;
}

describe('serializeError', () => {
  it('when an upstream call times out (a DOMException), then the line has its name, code, message and stack, and none of the legacy constants', () => {
    const timeout = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    const err = logged(timeout)['err'] as Record<string, unknown>;
    expect(err).toMatchObject({
      type: 'DOMException',
      name: 'TimeoutError',
      code: 23,
      message: 'The operation was aborted due to timeout',
    });
    expect(err['stack']).toContain('TimeoutError');
    expect(Object.keys(err).sort()).toEqual(['code', 'message', 'name', 'stack', 'type']);
  });

  it('when an error has a cause, then the cause is nested with its own message and stack, each written once', () => {
    const inner = new Error('connect ECONNREFUSED 127.0.0.1:9');
    Object.assign(inner, { code: 'ECONNREFUSED' });
    const err = logged(new Error('search call failed', { cause: inner }))['err'] as Record<
      string,
      unknown
    >;
    expect(err['message']).toBe('search call failed');
    expect(err['cause']).toMatchObject({
      type: 'Error',
      code: 'ECONNREFUSED',
      message: 'connect ECONNREFUSED 127.0.0.1:9',
    });
    expect(String(err['stack'])).not.toContain('ECONNREFUSED');
  });

  it('when an AggregateError is logged, then each of its errors is there', () => {
    const err = serializeError(
      new AggregateError([new Error('v4 refused'), new Error('v6 refused')], 'connect failed'),
    ) as { errors: { message: string }[] };
    expect(err.errors.map((e) => e.message)).toEqual(['v4 refused', 'v6 refused']);
  });

  it('when a Redis error carries its command, then only the command name is kept', () => {
    const refused = Object.assign(new Error('WRONGPASS invalid username-password pair'), {
      command: { name: 'auth', args: ['default', 'hunter2-redis-password'] },
    });
    const line = JSON.stringify(logged(refused));
    expect(line).toContain('"command":{"name":"auth"}');
    expect(line).not.toContain('hunter2-redis-password');
  });

  it('when causes loop, then the line still ends', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.assign(a, { cause: b });
    expect(serializeError(a)).toMatchObject({ cause: { message: 'b', cause: '[circular]' } });
  });
});
