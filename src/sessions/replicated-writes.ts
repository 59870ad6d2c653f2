import type { Logger } from 'pino';
import { createLogThrottle } from '../logging/log-throttle.js';
import { withinDeadline } from '../resilience/deadline.js';
import type { RedisConnection } from '../redis/redis-client.js';

/** One command of a write: its name and arguments, all on one key's node. */
export type WriteCommand = [command: string, ...args: (string | number | Buffer)[]];

/**
 * Writes that must survive a failover (sessions and their deletion), on connections kept for
 * them alone (contract section 7, Replicas). Redis `WAIT` blocks its connection and covers only
 * that connection's writes, so each write and its wait travel together here, never on the
 * connection the hot path uses; a write goes to the connection with the fewest writes under
 * way, so concurrent logins do not queue behind one another's wait.
 */
export interface ReplicatedWrites {
  /**
   * Sends `commands` (all to one key's node), then `WAIT 1 <bound>`. Resolves to the
   * commands' replies once the wait has answered: an unconfirmed write is a success (counted
   * and logged at warn), never a failure. Rejects when a command fails or the node does not
   * answer within the command deadline plus the wait's bound.
   */
  write(commands: readonly WriteCommand[], log?: Logger): Promise<unknown[]>;
  /** Writes no replica confirmed within the bound, since the start. */
  readonly unreplicated: number;
  /** Connects every connection (the composition root decides when). */
  connect(): Promise<void>;
  close(force: boolean): Promise<void>;
}

export interface ReplicatedWritesOptions {
  /** Makes one connection of the kind the state Redis uses (its duplicate). */
  open(): RedisConnection;
  /**
   * How many connections: the writes that may wait at once without queueing. Past that a write
   * queues behind another's wait on the least busy one, its deadline lengthened by that wait.
   */
  connections: number;
  /** How long a write waits for a replica; 0 waits for none (one server, nothing to promote). */
  replicaWaitMs: number;
  /** The deadline of the write itself, the wait's bound added on top. */
  commandTimeoutMs: number;
  logger: Logger;
}

/** What a WAIT may answer past its timeout: two cron ticks of a Redis at `hz 10`. */
const WAIT_TICK_SLACK_MS = 200;

export function createReplicatedWrites(options: ReplicatedWritesOptions): ReplicatedWrites {
  const { replicaWaitMs, logger } = options;
  const pool = Array.from({ length: Math.max(1, options.connections) }, () => ({
    redis: options.open(),
    busy: 0,
  }));
  // The connections report nothing of their own: the state connection reports Redis trouble.
  for (const { redis } of pool) redis.on('error', () => undefined);
  const throttle = createLogThrottle(logger);
  let unreplicated = 0;
  // Redis ends a WAIT that timed out on its next cron tick (every 100 ms at the default `hz` of
  // 10), not at its timeout: a stopped replica's wait answers up to a tick late, and that is
  // still an unconfirmed success, not a Redis that failed to answer.
  const waitMs = replicaWaitMs > 0 ? replicaWaitMs + WAIT_TICK_SLACK_MS : 0;
  /** A write's deadline: the command's, plus each wait queued on its connection, its own too. */
  const deadlineOf = (ahead: number) => options.commandTimeoutMs + (ahead + 1) * waitMs;

  const leastBusy = () => pool.reduce((best, c) => (c.busy < best.busy ? c : best));

  async function send(
    redis: RedisConnection,
    commands: readonly WriteCommand[],
  ): Promise<{ replies: unknown[]; acknowledged: number | undefined }> {
    // A pipeline: on a Cluster, every command of it goes to the node that holds the commands'
    // key, the WAIT included (it names no key of its own).
    const pipeline = redis.pipeline();
    for (const [command, ...args] of commands) pipeline.call(command, ...args);
    if (replicaWaitMs > 0) pipeline.call('WAIT', 1, replicaWaitMs);
    const results = (await pipeline.exec()) ?? [];
    const replies = results.slice(0, commands.length).map(([error, reply]) => {
      if (error) throw error;
      return reply;
    });
    if (replicaWaitMs === 0) return { replies, acknowledged: undefined };
    const [waitError, acknowledged] = results[commands.length] ?? [];
    // A node that refuses WAIT (no replicas configured on a managed node, a proxy that does not
    // pass it) still wrote: that is an unconfirmed write, not a failed one.
    return { replies, acknowledged: waitError ? 0 : Number(acknowledged) };
  }

  return {
    async write(commands, log) {
      const connection = leastBusy();
      const deadlineMs = deadlineOf(connection.busy);
      connection.busy += 1;
      try {
        const { replies, acknowledged } = await withinDeadline(
          send(connection.redis, commands),
          deadlineMs,
          () => new Error(`redis (session writes): no answer within ${deadlineMs} ms`),
        );
        if (acknowledged === 0) {
          unreplicated += 1;
          throttle.warn(
            'unreplicated',
            { replicaWaitMs },
            'session write not confirmed by a replica in time; it stands on the master',
            log,
          );
        }
        return replies;
      } finally {
        connection.busy -= 1;
      }
    },
    get unreplicated() {
      return unreplicated;
    },
    async connect() {
      await Promise.all(pool.map(({ redis }) => redis.connect().catch(() => undefined)));
    },
    async close(force) {
      await Promise.all(
        pool.map(async ({ redis }) => {
          if (force) redis.disconnect();
          else await redis.quit().catch(() => redis.disconnect());
        }),
      );
    },
  };
}
