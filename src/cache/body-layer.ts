import { LRUCache } from 'lru-cache';
import type { Representation } from './cache-entry.js';

/**
 * Bodies read from Redis, kept in process in front of it so that the next hit need not carry
 * its body over the wire again (a body enters when it is read, not when it is written: an
 * answer nobody asks for twice costs no memory here): the hit's one round trip sends the digest held here, and Redis
 * leaves the body out when its entry still has that digest. A body is only ever served when
 * Redis has just confirmed it is current, so this layer adds no staleness at all. Bounded in
 * bytes (CACHE_MAX_BYTES); the least recently used bodies go first.
 */
export interface BodyLayer {
  get(key: string): Representation | undefined;
  set(key: string, representation: Representation): void;
  readonly bytes: number;
}

export function createBodyLayer(options: { maxBytes: number }): BodyLayer {
  const bodies = new LRUCache<string, Representation>({
    maxSize: options.maxBytes,
    sizeCalculation: (representation, key) => representation.body.length + key.length + 128,
  });
  return {
    get: (key) => bodies.get(key),
    set(key, representation) {
      const { body, contentType, digest } = representation;
      // Only the representation: an entry's windows are Redis's to say on every hit.
      bodies.set(key, { body, contentType, digest });
    },
    get bytes() {
      return bodies.calculatedSize;
    },
  };
}
