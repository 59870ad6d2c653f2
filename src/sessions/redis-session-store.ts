import type { RedisConnection } from '../redis/redis-client.js';
import type { Logger } from 'pino';
import { AppError } from '../errors/app-error.js';
import type { Breaker } from '../resilience/circuit-breaker.js';
import { StoredSession, type SessionStore } from './session-store.js';

const KEY_VERSION = 'v1';

function unavailable(cause: unknown): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    'Sessions are unavailable right now; try again shortly.',
    {
      retryAfterSeconds: 1,
      cause,
    },
  );
}

/** Sessions shared by all instances. Redis trouble fails closed (503), never as "logged out". */
export function createRedisSessionStore(options: {
  redis: RedisConnection;
  /** The sessions' own Redis breaker; while open, session calls fail at once (503). */
  breaker: Breaker;
  logger: Logger;
  /**
   * With replicas that a failover may promote (Sentinel, Cluster): each record write waits up
   * to this long for one replica to hold it (Redis WAIT), so a failover right after a login
   * does not lose the session. Replication is asynchronous otherwise; 0 waits for nothing.
   */
  replicaWaitMs?: number;
  now?: () => number;
}): SessionStore {
  const { redis, breaker, logger } = options;
  const replicaWaitMs = options.replicaWaitMs ?? 0;
  const now = options.now ?? Date.now;
  // The hash tag puts the record in the same Redis Cluster slot as the session's own
  // rate-limit counter, so one script can check the one and bump the other.
  const keyOf = (idHash: string) => `session:${KEY_VERSION}:{${idHash}}`;

  async function write(idHash: string, session: StoredSession, when: 'always' | 'existing') {
    const ttlMs = Math.min(session.idleExpiresAt, session.absoluteExpiresAt) - now();
    if (ttlMs <= 0) return;
    const args = [keyOf(idHash), JSON.stringify(session), 'PX', ttlMs] as const;
    try {
      await breaker.run(async () => {
        if (replicaWaitMs === 0) {
          await (when === 'always' ? redis.set(...args) : redis.set(...args, 'XX'));
          return;
        }
        // One pipeline: on a cluster both go to the node that holds the record.
        const pipeline = redis.pipeline();
        if (when === 'always') pipeline.set(...args);
        else pipeline.set(...args, 'XX');
        const results = await pipeline.wait(1, replicaWaitMs).exec();
        // The write itself must succeed; a replica that did not confirm in time is not fatal.
        const writeError = results?.[0]?.[0];
        if (writeError) throw writeError;
      });
    } catch (error) {
      throw unavailable(error);
    }
  }

  return {
    backend: 'redis',
    recordKey: keyOf,
    async get(idHash) {
      let raw: string | null;
      try {
        raw = await breaker.run(() => redis.get(keyOf(idHash)));
      } catch (error) {
        throw unavailable(error);
      }
      if (raw === null) return undefined;
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        json = undefined;
      }
      const parsed = StoredSession.safeParse(json);
      if (!parsed.success) {
        logger.warn('corrupt session record ignored');
        return undefined;
      }
      return parsed.data;
    },
    set: (idHash, session) => write(idHash, session, 'always'),
    // SET … XX: only a record that still exists is written, so a DEL (logout, rotation) that
    // landed between this request's read and its write is never undone.
    refresh: (idHash, session) => write(idHash, session, 'existing'),
    async exists(idHash) {
      try {
        // The record's TTL is its idle and absolute expiry: a key that exists is a live session.
        return (await breaker.run(() => redis.exists(keyOf(idHash)))) === 1;
      } catch (error) {
        throw unavailable(error);
      }
    },
    async delete(idHash) {
      try {
        await breaker.run(() => redis.del(keyOf(idHash)));
      } catch (error) {
        throw unavailable(error);
      }
    },
  };
}
