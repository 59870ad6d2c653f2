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

/** A stored record, or nothing for one that is not JSON or not a session (said once). */
function parseRecord(raw: string, logger: Logger): StoredSession | undefined {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    json = undefined;
  }
  const parsed = StoredSession.safeParse(json);
  if (parsed.success) return parsed.data;
  logger.warn('corrupt session record ignored');
  return undefined;
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
  /** A session call through the breaker; any Redis trouble is a 503, never "logged out". */
  const guarded = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await breaker.run(run);
    } catch (error) {
      throw unavailable(error);
    }
  };

  async function write(idHash: string, session: StoredSession, when: 'always' | 'existing') {
    const ttlMs = Math.min(session.idleExpiresAt, session.absoluteExpiresAt) - now();
    if (ttlMs <= 0) return;
    const args = [keyOf(idHash), JSON.stringify(session), 'PX', ttlMs] as const;
    await guarded(async () => {
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
  }

  return {
    backend: 'redis',
    recordKey: keyOf,
    async get(idHash) {
      const raw = await guarded(() => redis.get(keyOf(idHash)));
      return raw === null ? undefined : parseRecord(raw, logger);
    },
    set: (idHash, session) => write(idHash, session, 'always'),
    // SET … XX: only a record that still exists is written, so a DEL (logout, rotation) that
    // landed between this request's read and its write is never undone.
    refresh: (idHash, session) => write(idHash, session, 'existing'),
    // The record's TTL is its idle and absolute expiry: a key that exists is a live session.
    exists: async (idHash) => (await guarded(() => redis.exists(keyOf(idHash)))) === 1,
    async delete(idHash) {
      await guarded(() => redis.del(keyOf(idHash)));
    },
  };
}
