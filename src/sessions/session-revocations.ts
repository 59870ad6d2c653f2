import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import { createLogThrottle, type LogThrottle } from '../logging/log-throttle.js';
import { duplicateOf, type RedisConnection } from '../redis/redis-client.js';
import { createRevocationMemory, type RevocationMemory } from './revocation-memory.js';

/**
 * Makes an ended session stay ended across a Redis failover (contract section 7, Logout is
 * final across a failover). A DEL that no replica confirmed is lost when the master dies and a
 * replica is promoted; waiting longer for the replica cannot help when there is none. So every
 * instance remembers the sessions it ended, and those it heard of, until each one's absolute
 * expiry (revocation-memory.ts), and:
 *
 * - rejects a remembered session without asking Redis (lookups, refreshes, open streams);
 * - tells the other instances over pub/sub on the state Redis (best effort: the bus runs on the
 *   master that may be the one to fail, so it is not the only copy);
 * - writes every remembered revocation back (DEL again) once its connection reaches a master
 *   again, so an instance started after the promotion, which remembers nothing, finds no record.
 *
 * When to write back: with one server or Sentinel, at the state connection's `ready` after a
 * reconnect (ioredis asks the Sentinels for the master on every reconnect, so a promotion
 * always comes as one) when the server's `run_id` is not the one it had before: another
 * process, so a promoted replica or a restarted master that may have lost the DELs. A reconnect
 * to the same process (a network blip) writes nothing, and a server that refuses INFO gets the
 * write-back on every reconnect. Polling `run_id` instead would see a promotion only a poll
 * interval later, for a command per interval. On a Cluster, a node joining or leaving the
 * client's connection pool (a master's death, a promotion) triggers it; DELs of keys that are
 * gone are idempotent and cheap.
 */
export interface SessionRevocations {
  /** Whether this instance knows `idHash` was ended (and its expiry has not passed). */
  has(idHash: string): boolean;
  /** A session this instance ended: remembered until `absoluteExpiresAt`, told to the others. */
  revoked(idHash: string, absoluteExpiresAt: number): void;
  readonly memory: RevocationMemory;
  start(): Promise<void>;
  close(): void;
}

export interface SessionRevocationsOptions {
  /** The state connection: publishes, and its reconnects trigger the write-back. */
  redis: RedisConnection;
  /** The record key of a session (without the key prefix, which the connection adds). */
  keyOf: (idHash: string) => string;
  /** The deployment's key prefix: the channel is the deployment's own. */
  keyPrefix: string;
  /** Revocations remembered at most (each ~120 bytes of heap). */
  maxEntries: number;
  logger: Logger;
  now?: () => number;
}

/** Keys deleted at once by a write-back: enough to fill a round trip, not to hog the server. */
const WRITE_BACK_CHUNK = 256;
/** A write-back that failed (the new master not answering yet) is tried again this often. */
const WRITE_BACK_RETRY_MS = 1000;
const WRITE_BACK_ATTEMPTS = 30;
/** Expired revocations are dropped this often. */
const SWEEP_EVERY_MS = 60_000;
const MESSAGE = /^([A-Za-z0-9_-]{43}) (\d{1,15})$/;

/**
 * Deletes every remembered session's record again, in chunks, retried each second (up to
 * WRITE_BACK_ATTEMPTS) while the new master does not answer yet; one run at a time, and a
 * request made during a run runs once more after it.
 */
function createWriteBack(options: {
  redis: RedisConnection;
  keyOf: (idHash: string) => string;
  memory: RevocationMemory;
  logger: Logger;
  throttle: LogThrottle;
}): { schedule(): void; close(): void } {
  const { redis, keyOf, memory, logger, throttle } = options;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  let running: Promise<void> | undefined;
  let again = false;

  /** False when some delete failed. */
  async function writeBack(): Promise<boolean> {
    const hashes = memory.live();
    let failed = 0;
    for (let i = 0; i < hashes.length && !closed; i += WRITE_BACK_CHUNK) {
      const chunk = hashes.slice(i, i + WRITE_BACK_CHUNK);
      // One DEL per key: on a Cluster the records sit in many slots.
      const results = await Promise.allSettled(chunk.map((idHash) => redis.del(keyOf(idHash))));
      failed += results.filter((r) => r.status === 'rejected').length;
    }
    if (hashes.length > 0 && failed === 0) {
      logger.info({ revocations: hashes.length }, 'session revocations written back to Redis');
    }
    return failed === 0;
  }

  function schedule(attempt = 1): void {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(retry);
    running = writeBack().then(
      (done) => {
        running = undefined;
        if (again) {
          again = false;
          schedule();
        } else if (!done && attempt < WRITE_BACK_ATTEMPTS) {
          throttle.warn('revocations-write-back', {}, 'session revocations not yet written back');
          retry = setTimeout(() => schedule(attempt + 1), WRITE_BACK_RETRY_MS);
          retry.unref();
        }
      },
      () => (running = undefined),
    );
  }

  return {
    schedule: () => schedule(),
    close() {
      closed = true;
      clearTimeout(retry);
    },
  };
}

/**
 * Calls `reached` whenever the connection may have reached another server than before: on a
 * Cluster a node joining or leaving the client's pool; otherwise a `ready` whose server
 * `run_id` differs from the last one (or cannot be read).
 */
function onAnotherServer(redis: RedisConnection, reached: () => void): void {
  if (redis instanceof Cluster) {
    redis.on('+node', reached);
    redis.on('-node', reached);
    return;
  }
  /** The server process of the last connection; null before the first. */
  let lastRunId: string | undefined | null = null;
  redis.on('ready', () => {
    void redis
      .info('server')
      .then(
        (info) => /^run_id:(\w+)/m.exec(info)?.[1],
        () => undefined,
      )
      .then((runId) => {
        const before = lastRunId;
        lastRunId = runId;
        if (before !== null && (runId === undefined || runId !== before)) reached();
      });
  });
}

export function createSessionRevocations(options: SessionRevocationsOptions): SessionRevocations {
  const { redis, keyOf, logger } = options;
  const memory = createRevocationMemory({
    maxEntries: options.maxEntries,
    ...(options.now ? { now: options.now } : {}),
  });
  // Pub/sub channel names take no key prefix from the connection.
  const channel = `${options.keyPrefix}sessions:revoked`;
  const throttle = createLogThrottle(logger);
  // A connection of its own: one in subscriber mode can run no other command.
  const subscriber = duplicateOf(redis);
  let sweeper: NodeJS.Timeout | undefined;

  subscriber.on('error', () => undefined); // the state connection reports Redis trouble
  subscriber.on('message', (from: string, message: string) => {
    const heard = from === channel ? MESSAGE.exec(message) : null;
    if (heard) memory.remember(heard[1]!, Number(heard[2]));
  });
  subscriber.on('ready', () => {
    subscriber.subscribe(channel).catch((error: unknown) => {
      throttle.warn('revocations-subscribe', { err: error }, 'session revocation bus down');
    });
  });
  const writeBack = createWriteBack({ redis, keyOf, memory, logger, throttle });
  onAnotherServer(redis, () => writeBack.schedule());

  return {
    has: (idHash) => memory.has(idHash),
    revoked(idHash, absoluteExpiresAt) {
      memory.remember(idHash, absoluteExpiresAt);
      redis.publish(channel, `${idHash} ${absoluteExpiresAt}`).catch((error: unknown) => {
        throttle.warn('revocations-publish', { err: error }, 'session revocation not broadcast');
      });
    },
    memory,
    async start() {
      sweeper = setInterval(() => memory.sweep(), SWEEP_EVERY_MS);
      sweeper.unref();
      await subscriber.connect().catch(() => undefined);
    },
    close() {
      writeBack.close();
      clearInterval(sweeper);
      subscriber.disconnect();
    },
  };
}
