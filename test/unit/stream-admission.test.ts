import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { EventHub } from '../../src/features/events/event-hub.js';
import { createStreamAdmission } from '../../src/features/events/stream-admission.js';
import { compileTrust, clientAddress, toRateLimitAddress } from '../../src/http/client-address.js';

const credentials = { email: 'ada@acme.test', apiKey: 'key' };

/** A request from a proxy on loopback, naming the client in X-Forwarded-For. */
const forwarded = (address: string) =>
  ({
    headers: { 'x-forwarded-for': address },
    socket: { remoteAddress: '127.0.0.1' },
  }) as unknown as IncomingMessage;

function admission(
  options: {
    size?: number;
    held?: number;
    draining?: boolean;
    trust?: ReturnType<typeof compileTrust>;
  } = {},
) {
  const hub = {
    size: options.size ?? 0,
    heldBy: () => options.held ?? 0,
    refuse: () => undefined,
  } as unknown as EventHub;
  return createStreamAdmission({
    hub,
    maxStreams: 10,
    maxPerClient: 2,
    trust: options.trust,
    ipv6Prefix: 64,
    isDraining: () => options.draining ?? false,
  });
}

describe('who a stream counts against', () => {
  it('when a session names the chat user, then the stream counts against that user, whatever address it comes from', () => {
    const gate = admission({ trust: compileTrust(1) });
    expect(gate.clientOf(forwarded('198.51.100.7'), { credentials, userId: 7 })).toBe('user:7');
    expect(gate.clientOf(forwarded('198.51.100.8'), { credentials, userId: 7 })).toBe('user:7');
  });

  it('when the service account is used behind a trusted proxy, then the stream counts against the address as the rate limits count it', () => {
    const trust = compileTrust(1);
    const gate = admission({ trust });
    const req = forwarded('2001:db8:1:2::17');
    expect(gate.clientOf(req, { credentials })).toBe(
      `address:${toRateLimitAddress(clientAddress(req, trust), 64)}`,
    );
    expect(gate.clientOf(req, { credentials })).toBe('address:2001:db8:1:2::/64');
  });

  it('when no proxy is trusted, then service-mode streams count against nobody (every client would be the proxy)', () => {
    expect(admission().clientOf(forwarded('198.51.100.7'), { credentials })).toBeUndefined();
  });
});

describe('whether a stream may open', () => {
  it('when the instance drains, is full, or the caller holds its quota, then the refusal says which, draining first', () => {
    expect(admission({ draining: true, size: 10, held: 2 }).refusal('user:7')).toBe('draining');
    expect(admission({ size: 10, held: 2 }).refusal('user:7')).toBe('full');
    expect(admission({ held: 2 }).refusal('user:7')).toBe('per_client');
    expect(admission({ held: 1 }).refusal('user:7')).toBeUndefined();
    expect(admission({ held: 2 }).refusal(undefined)).toBeUndefined();
  });

  it('when a caller is past its quota, then the answer is 429 TOO_MANY_STREAMS with Retry-After; a full or draining instance is 503', () => {
    const gate = admission();
    expect(gate.refuse('per_client')).toMatchObject({ code: 'TOO_MANY_STREAMS' });
    expect(gate.refuse('per_client').retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(gate.refuse('full')).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(gate.refuse('draining')).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});
