import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { LogThrottle } from '../logging/log-throttle.js';

/**
 * Descriptors the gateway keeps for itself beyond client connections: both upstreams' pools
 * and proxy agents, Redis, the listeners, files and a margin.
 */
export const RESERVED_DESCRIPTORS = 512;
/** The default cap never goes higher, however many descriptors the process may open. */
const DEFAULT_CAP_CEILING = 4096;

/** The process's soft limit on open files (`Max open files` in /proc/self/limits), if known. */
export function openFilesLimit(
  read: () => string = () => readFileSync('/proc/self/limits', 'utf8'),
): number | undefined {
  try {
    const line = read()
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === undefined || soft === 'unlimited' ? undefined : Number(soft) || undefined;
  } catch {
    return undefined; // not Linux: no /proc
  }
}

/**
 * MAX_CONNECTIONS (contract section 1): the configured cap, or one derived from the process's
 * own descriptor limit so that client connections can never take the descriptors upstream and
 * Redis calls need: half of what is left after the reserve, at most 4096. A configured cap
 * that leaves less than the reserve is a start-up error.
 */
export function connectionCap(configured: number | undefined, limit: number | undefined): number {
  if (configured !== undefined) {
    if (limit !== undefined && configured > limit - RESERVED_DESCRIPTORS) {
      throw new RangeError(
        `MAX_CONNECTIONS must leave ${RESERVED_DESCRIPTORS} of the process's ${limit} descriptors free (at most ${limit - RESERVED_DESCRIPTORS})`,
      );
    }
    return configured;
  }
  if (limit === undefined) return DEFAULT_CAP_CEILING;
  return Math.max(
    16,
    Math.min(DEFAULT_CAP_CEILING, Math.floor((limit - RESERVED_DESCRIPTORS) / 2)),
  );
}

/**
 * The cap is reached: the oldest connection that has not sent a request yet is closed for
 * the newcomer, or failing one, the oldest idle keep-alive connection (HTTP lets a server
 * close those at any time); only when every connection has a request under way is the
 * newcomer refused. A silent connection therefore lives until the cap's worth of newer
 * connections arrive, and a probe's request, once sent, is never the one to go.
 */
export function makeRoomFor(
  newcomer: Socket,
  busy: Map<Socket, number>,
  used: WeakSet<Socket>,
  throttle: LogThrottle,
): void {
  let victim: Socket | undefined;
  for (const [socket, requests] of busy) {
    if (socket === newcomer || requests > 0) continue;
    if (!used.has(socket)) {
      victim = socket;
      break;
    }
    victim ??= socket;
  }
  if (victim === undefined) {
    warnDropped(throttle, newcomer);
    busy.delete(newcomer);
    newcomer.destroy();
    return;
  }
  throttle.warn(
    'evict',
    { remoteAddress: victim.remoteAddress },
    'connection cap reached: oldest connection without a request closed',
  );
  // Out of the count now: its 'close' event comes later, and the next newcomer must not
  // count it again.
  busy.delete(victim);
  victim.destroy();
}

/** The cap refused a new connection, and said so (throttled). */
export function warnDropped(
  throttle: LogThrottle,
  data: { remoteAddress?: string | undefined } | undefined,
): void {
  throttle.warn(
    'drop',
    { remoteAddress: data?.remoteAddress },
    'connection cap reached: new connection closed',
  );
}
