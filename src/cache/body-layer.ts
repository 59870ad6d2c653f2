import { LRUCache } from 'lru-cache';
import type { EntryBodies, Representation } from './cache-entry.js';
import { encodedBytes, type MadeEncoding } from './encodings.js';

/** What the layer holds for a key: an entry's bodies, under the digest of its identity body. */
export interface HeldBodies {
  readonly digest: string;
  /** The identity body and the compressed ones stored with it (decodeEntry's `known`). */
  readonly body: EntryBodies;
}

/**
 * Bodies read from Redis, kept in process in front of it so that the next hit need not carry
 * its body over the wire again (a body enters when it is read, not when it is written: an
 * answer nobody asks for twice costs no memory here). The hit's one round trip sends the
 * digest held here and which compressed bodies are held with it, and Redis leaves the bodies
 * out when its entry still has that digest and no compressed body this layer lacks. A body is
 * only ever served when Redis has just confirmed it is current, so this layer adds no
 * staleness at all. The compressed bodies stay with their identity body, those this instance
 * made included, so a compressed hit costs no compression either. Bounded in bytes
 * (CACHE_MAX_BYTES, every body counted); the least recently used go first.
 */
export interface BodyLayer {
  get(key: string): HeldBodies | undefined;
  /**
   * Holds a representation's bodies and returns what is held. When the layer already holds the
   * same body (reads sent before the first of them was held all bring it whole), it keeps the
   * held Buffer, with every compressed body either has: one copy in memory, and a compression
   * made for it (encodings.ts, per Buffer) serves all of those answers.
   */
  set(key: string, representation: Representation): HeldBodies;
  /** Adds a compressed body made here to the bodies held for `digest`, if it still holds them. */
  addEncoding(key: string, digest: string, made: MadeEncoding): void;
  readonly bytes: number;
}

export function createBodyLayer(options: { maxBytes: number }): BodyLayer {
  const bodies = new LRUCache<string, HeldBodies>({
    maxSize: options.maxBytes,
    sizeCalculation: ({ body }, key) =>
      body.identity.length + encodedBytes(body.encoded) + key.length + 128,
  });
  return {
    get: (key) => bodies.get(key),
    set(key, representation) {
      const { body, digest, encoded } = representation;
      const same = bodies.peek(key);
      const merged =
        same?.digest === digest && (same.body.encoded || encoded)
          ? { ...same.body.encoded, ...encoded }
          : encoded;
      const identity = same?.digest === digest ? same.body.identity : body;
      const kept = { identity, ...(merged ? { encoded: merged } : {}) };
      // Only the bodies: an entry's windows are Redis's to say on every hit.
      const held = { digest, body: kept };
      bodies.set(key, held);
      return held;
    },
    addEncoding(key, digest, { coding, bytes }) {
      const held = bodies.peek(key);
      if (held?.digest !== digest || held.body.encoded?.[coding] !== undefined) return;
      const encoded = { ...held.body.encoded, [coding]: bytes };
      bodies.set(key, { digest, body: { identity: held.body.identity, encoded } });
    },
    get bytes() {
      return bodies.calculatedSize;
    },
  };
}
