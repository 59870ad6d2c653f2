import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemorySessionStore } from '../../src/sessions/memory-session-store.js';
import { createSessionSealer } from '../../src/sessions/session-crypto.js';
import { createSessionManager } from '../../src/sessions/session-manager.js';
import type { SessionStore, StoredSession } from '../../src/sessions/session-store.js';

const profile = { userId: 4, email: 'marie@acme.test', fullName: 'Marie', role: 400 };
const credentials = { email: 'marie@acme.test', apiKey: 'canaryApiKey0123456789abcdefghij' };

function setup(idle = 600, absolute = 3600) {
  let t = 1_000_000;
  const inner = createMemorySessionStore({ now: () => t });
  const writes: StoredSession[] = [];
  const store: SessionStore = {
    ...inner,
    set: (h, s) => (writes.push(s), inner.set(h, s)),
    refresh: (h, s) => (writes.push(s), inner.refresh(h, s)),
  };
  const manager = createSessionManager({
    store,
    sealer: createSessionSealer('s'.repeat(32)),
    idleTimeoutSeconds: idle,
    absoluteTimeoutSeconds: absolute,
    now: () => t,
  });
  return { manager, writes, advance: (seconds: number) => (t += seconds * 1000) };
}

describe('session manager', () => {
  it('when a session is created, then its id is 256 random bits and the store holds no key in the clear', async () => {
    const { manager, writes } = setup();
    const { id } = await manager.create(profile, credentials);
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(writes)).not.toContain(credentials.apiKey);
    expect((await manager.lookup(id))?.credentials).toEqual(credentials);
  });

  it('when a session is unused past the idle timeout, then it is gone', async () => {
    const { manager, advance } = setup(600, 3600);
    const { id } = await manager.create(profile, credentials);
    advance(599);
    expect(await manager.lookup(id)).toBeDefined();
    advance(599); // used at 599 s, so it slid: still alive
    expect(await manager.lookup(id)).toBeDefined();
    advance(601);
    expect(await manager.lookup(id)).toBeUndefined();
  });

  it('when a session is used steadily, then it still ends at the absolute timeout', async () => {
    const { manager, advance } = setup(600, 1800);
    const { id } = await manager.create(profile, credentials);
    for (let i = 0; i < 5; i += 1) {
      advance(300);
      expect(await manager.lookup(id)).toBeDefined();
    }
    advance(301);
    expect(await manager.lookup(id)).toBeUndefined();
  });

  it('when lookups come in quick succession, then the idle expiry is written back at most once a minute', async () => {
    const { manager, writes, advance } = setup(1800, 3600);
    const { id } = await manager.create(profile, credentials);
    for (let i = 0; i < 10; i += 1) {
      advance(5);
      await manager.lookup(id);
    }
    expect(writes).toHaveLength(1 + 0); // 50 s of use: no write-back yet
    advance(20);
    await manager.lookup(id);
    expect(writes).toHaveLength(2);
  });

  it('when a session is destroyed, then its id no longer works', async () => {
    const { manager } = setup();
    const { id } = await manager.create(profile, credentials);
    await manager.destroy(id);
    expect(await manager.lookup(id)).toBeUndefined();
  });

  it.each(['', 'short', 'x'.repeat(43).replace(/x/g, '!'), `${'a'.repeat(43)}\n`])(
    'when the id is malformed (%j), then it matches no session',
    async (id) => {
      const { manager } = setup();
      expect(await manager.lookup(id)).toBeUndefined();
    },
  );
});

describe('session sealer', () => {
  const sealer = createSessionSealer('k'.repeat(32));
  it('when a sealed key is opened under the session it was made for, then it comes back', () => {
    expect(sealer.open(sealer.seal('secret', 'hash-a'), 'hash-a')).toBe('secret');
  });
  it('when a sealed key is moved to another session, tampered with, or opened with another key, then it does not open', () => {
    const sealed = sealer.seal('secret', 'hash-a');
    expect(sealer.open(sealed, 'hash-b')).toBeUndefined();
    const bytes = Buffer.from(sealed, 'base64url');
    bytes[bytes.length - 1]! ^= 1;
    expect(sealer.open(bytes.toString('base64url'), 'hash-a')).toBeUndefined();
    expect(createSessionSealer('z'.repeat(32)).open(sealed, 'hash-a')).toBeUndefined();
    expect(sealer.open('', 'hash-a')).toBeUndefined();
  });
});

describe('session refresh', () => {
  it('when a session is destroyed between a lookup and its idle write-back, then the write-back does not bring it back', async () => {
    let t = 1_000_000;
    const inner = createMemorySessionStore({ now: () => t });
    let destroyFirst: (() => Promise<void>) | undefined;
    // The store's read resolves only after the destroy has run: the write-back comes last.
    const store: SessionStore = {
      ...inner,
      get: async (h) => {
        const read = await inner.get(h);
        await destroyFirst?.();
        return read;
      },
    };
    const manager = createSessionManager({
      store,
      sealer: createSessionSealer('k'.repeat(32)),
      idleTimeoutSeconds: 600,
      absoluteTimeoutSeconds: 3600,
      now: () => t,
    });
    const { id } = await manager.create(profile, credentials);
    t += 120_000;
    destroyFirst = () => manager.destroy(id);
    expect(await manager.lookup(id)).toBeDefined(); // it was read before the end
    destroyFirst = undefined;
    expect(await manager.lookup(id)).toBeUndefined();
    expect(await inner.get(createHash('sha256').update(id).digest('base64url'))).toBeUndefined();
  });
});
