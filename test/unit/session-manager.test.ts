import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemorySessionStore } from '../../src/sessions/memory-session-store.js';
import { createRevocationMemory } from '../../src/sessions/revocation-memory.js';
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
    create: (h, s) => (writes.push(s), inner.create(h, s)),
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
    await manager.destroy(id, 'logout');
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
    destroyFirst = () => manager.destroy(id, 'logout');
    expect(await manager.lookup(id)).toBeDefined(); // it was read before the end
    destroyFirst = undefined;
    expect(await manager.lookup(id)).toBeUndefined();
    expect(await inner.get(createHash('sha256').update(id).digest('base64url'))).toBeUndefined();
  });
});

describe('sessions per user (SESSION_MAX_PER_USER, contract section 7)', () => {
  const other = { userId: 9, email: 'omar@acme.test', fullName: 'Omar', role: 400 };
  const othersKey = { email: 'omar@acme.test', apiKey: 'otherApiKey0123456789abcdefghijk' };

  function limited(options: { maxPerUser: number; maxSessions?: number }) {
    let t = 1_000_000;
    const store = createMemorySessionStore({ ...options, now: () => t });
    const manager = createSessionManager({
      store,
      sealer: createSessionSealer('s'.repeat(32)),
      idleTimeoutSeconds: 600,
      absoluteTimeoutSeconds: 3600,
      now: () => t,
    });
    return { manager, advance: (seconds: number) => (t += seconds * 1000) };
  }

  it('when a user opens one session past the limit, then their oldest ends, the others and other users stay', async () => {
    const { manager, advance } = limited({ maxPerUser: 3 });
    const theirs = await manager.create(other, othersKey);
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      advance(1);
      ids.push((await manager.create(profile, credentials)).id);
    }
    expect(await manager.lookup(ids[0]!)).toBeUndefined();
    for (const id of ids.slice(1)) expect(await manager.lookup(id)).toBeDefined();
    expect(await manager.lookup(theirs.id)).toBeDefined();
    expect(await manager.alive([ids[0]!, ids[3]!])).toEqual([false, true]);
    expect(manager.ended.user_limit).toBe(1);
  });

  it("when a user's older sessions have expired, then they hold no place under the limit", async () => {
    const { manager, advance } = limited({ maxPerUser: 2 });
    const first = await manager.create(profile, credentials);
    advance(601); // past the idle timeout
    const second = await manager.create(profile, credentials);
    const third = await manager.create(profile, credentials);
    expect(await manager.lookup(second.id)).toBeDefined();
    expect(await manager.lookup(third.id)).toBeDefined();
    expect(await manager.lookup(first.id)).toBeUndefined();
    expect(manager.ended.user_limit).toBe(0);
  });

  it("when one account logs in 50 times into a store of 20, then every login works and another user's login still gets a session", async () => {
    const { manager } = limited({ maxPerUser: 10, maxSessions: 20 });
    for (let i = 0; i < 50; i += 1) await manager.create(profile, credentials);
    await expect(manager.create(other, othersKey)).resolves.toBeDefined();
    expect(manager.ended.user_limit).toBe(40);
  });

  it('when a login replaces the browser’s session, then that one ends first (a rotation) and the user’s other sessions stay', async () => {
    const { manager } = limited({ maxPerUser: 3 });
    const [a, b, c] = [
      await manager.create(profile, credentials),
      await manager.create(profile, credentials),
      await manager.create(profile, credentials),
    ];
    const d = await manager.create(profile, credentials, { replacing: c.id });
    expect(await manager.alive([a.id, b.id, c.id, d.id])).toEqual([true, true, false, true]);
    expect(manager.ended).toMatchObject({ rotation: 1, user_limit: 0 });
  });

  it('when a logout names a session that does not exist, then nothing is counted as ended', async () => {
    const { manager } = limited({ maxPerUser: 3 });
    const { id } = await manager.create(profile, credentials);
    await manager.destroy(id, 'logout');
    await manager.destroy(id, 'logout');
    await manager.destroy('x'.repeat(43), 'logout');
    expect(manager.ended.logout).toBe(1);
  });
});

describe('revocation memory', () => {
  it("when a revocation's expiry passes, then it is forgotten", () => {
    let t = 0;
    const memory = createRevocationMemory({ maxEntries: 10, now: () => t });
    memory.remember('a', 100);
    memory.remember('late', 0); // already expired: never held
    expect(memory.has('a')).toBe(true);
    expect(memory.size).toBe(1);
    t = 100;
    expect(memory.has('a')).toBe(false);
    expect(memory.size).toBe(0);
  });

  it('when it is full, then expired entries go first, then the longest remembered, and the bound holds', () => {
    let t = 0;
    const memory = createRevocationMemory({ maxEntries: 3, now: () => t });
    memory.remember('old', 5_000);
    memory.remember('short', 500);
    memory.remember('next', 9_000);
    t = 1_000;
    memory.remember('new', 9_000); // 'short' has expired: it goes
    expect(memory.live()).toEqual(['old', 'next', 'new']);
    memory.remember('newer', 9_000); // nothing expired (swept a moment ago): the longest held goes
    expect(memory.live()).toEqual(['next', 'new', 'newer']);
    expect(memory.forgotten).toBe(1);
    for (let i = 0; i < 100; i += 1) memory.remember(`n${i}`, 9_000);
    expect(memory.size).toBe(3);
  });
});
