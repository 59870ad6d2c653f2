import type { RedisConnection } from '../redis/redis-client.js';
import type { Logger } from 'pino';
import { AppError } from '../errors/app-error.js';
import type { Lifecycle } from '../lifecycle/lifecycle.js';
import type { Breaker } from '../resilience/circuit-breaker.js';
import type { ReplicatedWrites, WriteCommand } from './replicated-writes.js';
import { createSessionRevocations } from './session-revocations.js';
import { StoredSession, type SessionStore } from './session-store.js';
import { createUserSessionIndex } from './user-session-index.js';

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

/**
 * Revocations each instance remembers (session-revocations.ts): at ~120 bytes each, 12 MB of
 * heap at most; a fleet's logouts, rotations and per-user trims within the default 12-hour
 * absolute timeout at 2.3 a second.
 */
const MAX_REMEMBERED_REVOCATIONS = 100_000;

/**
 * Sessions shared by all instances. Redis trouble fails closed (503), never as "logged out".
 * Reads go on the state connection; writes and deletes on the connections kept for them
 * (replicated-writes.ts), each with its wait for a replica, so a stalled replica slows
 * no read and no other Redis use (contract section 7, Replicas). An ended session is
 * remembered and rejected without asking Redis, so a failover that loses its DEL does not
 * bring it back (session-revocations.ts), and each user's sessions are bounded fleet-wide
 * (user-session-index.ts).
 */
export function createRedisSessionStore(options: {
  redis: RedisConnection;
  /** Record writes and deletes, each confirmed by a replica where a failover may promote one. */
  writes: ReplicatedWrites;
  /** The sessions' own Redis breaker for reads; while open, they fail at once (503). */
  breaker: Breaker;
  /** The breaker of writes: a write no replica confirmed is a success, never its failure. */
  writeBreaker: Breaker;
  /** SESSION_MAX_PER_USER. */
  maxPerUser: number;
  /** The deployment's key prefix (the revocation channel's name). */
  keyPrefix: string;
  /** Where the revocation bus registers its start and close. */
  lifecycle: Lifecycle;
  /** Revocations remembered at most (default MAX_REMEMBERED_REVOCATIONS). */
  maxRevocations?: number;
  logger: Logger;
  now?: () => number;
}): SessionStore {
  const { redis, breaker, logger, writes } = options;
  const now = options.now ?? Date.now;
  // The hash tag puts the record in the same Redis Cluster slot as the session's own
  // rate-limit counter, so one script can check the one and bump the other.
  const keyOf = (idHash: string) => `session:${KEY_VERSION}:{${idHash}}`;
  /** A session call through a breaker; any Redis trouble is a 503, never "logged out". */
  const guarded = async <T>(run: () => Promise<T>, through = breaker): Promise<T> => {
    try {
      return await through.run(run);
    } catch (error) {
      throw unavailable(error);
    }
  };
  const written = (commands: readonly WriteCommand[]) =>
    guarded(() => writes.write(commands), options.writeBreaker);
  const revocations = createSessionRevocations({
    redis,
    keyOf,
    keyPrefix: options.keyPrefix,
    maxEntries: options.maxRevocations ?? MAX_REMEMBERED_REVOCATIONS,
    logger,
    now,
  });
  options.lifecycle.onStart('session revocations', () => revocations.start());
  options.lifecycle.onClose('session revocations', () => revocations.close());
  const index = createUserSessionIndex({ redis, max: options.maxPerUser, now });

  async function write(idHash: string, session: StoredSession, when: 'always' | 'existing') {
    const ttlMs = Math.min(session.idleExpiresAt, session.absoluteExpiresAt) - now();
    if (ttlMs <= 0) return;
    const set: WriteCommand = ['SET', keyOf(idHash), JSON.stringify(session), 'PX', ttlMs];
    await written([when === 'always' ? set : [...set, 'XX']]);
  }

  /**
   * Ends a session as a logout does: its record deleted (GETDEL says whether there was one,
   * and until when it would have lived), and the revocation remembered and told to the fleet.
   */
  async function end(idHash: string): Promise<StoredSession | undefined> {
    const [raw] = await written([['GETDEL', keyOf(idHash)]]);
    const ended = typeof raw === 'string' ? parseRecord(raw, logger) : undefined;
    // Only a session that existed is remembered: forged cookies cannot fill the memory.
    if (ended) revocations.revoked(idHash, ended.absoluteExpiresAt);
    return ended;
  }

  return {
    backend: 'redis',
    recordKey: keyOf,
    async get(idHash) {
      if (revocations.has(idHash)) return undefined;
      const raw = await guarded(() => redis.get(keyOf(idHash)));
      return raw === null ? undefined : parseRecord(raw, logger);
    },
    async create(idHash, session) {
      await write(idHash, session, 'always');
      // After the record: a member of a user's set always has had its record written, so a
      // concurrent login that finds a member's record missing knows that session ended.
      const trimmed = await guarded(() =>
        index.add({ ...session, idHash }, async (member) =>
          revocations.has(member) ? true : (await redis.exists(keyOf(member))) === 0,
        ),
      );
      const ended = await Promise.all(trimmed.map(end));
      return trimmed.filter((_, i) => ended[i] !== undefined);
    },
    // SET … XX: only a record that still exists is written, so a DEL (logout, rotation) that
    // landed between this request's read and its write is never undone.
    refresh: (idHash, session) =>
      revocations.has(idHash) ? Promise.resolve() : write(idHash, session, 'existing'),
    // The record's TTL is its idle and absolute expiry: a key that exists is a live session.
    exists: async (idHash) =>
      !revocations.has(idHash) && (await guarded(() => redis.exists(keyOf(idHash)))) === 1,
    async delete(idHash) {
      const ended = await end(idHash);
      // Tidiness only: a member whose record is gone is dropped at the user's next login anyway.
      if (ended) await index.remove(ended.userId, idHash).catch(() => undefined);
      return ended !== undefined;
    },
  };
}
