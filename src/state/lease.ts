import { randomUUID } from 'node:crypto';
import type { RedisConnection } from '../redis/redis-client.js';

/**
 * A lease held by one instance of a deployment at a time: taken with a random token and an
 * expiry, renewed by its holder, taken over by another instance once its holder stops renewing
 * (it died, or lost Redis), released at shutdown. Without Redis the one instance always holds it.
 */
export interface Lease {
  /** Takes the lease if nobody holds it, or confirms this instance holds it; false otherwise. */
  hold(): Promise<boolean>;
  release(): Promise<void>;
}

export const SOLO_LEASE: Lease = {
  hold: () => Promise.resolve(true),
  release: () => Promise.resolve(),
};

/** Renews the lease if the token is still ours, or takes it if it is free. */
const HOLD = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

declare module 'ioredis' {
  interface RedisCommander {
    bffLeaseHold(key: string, token: string, ttlMs: number): Promise<number>;
    bffLeaseRelease(key: string, token: string): Promise<number>;
  }
}

export function createRedisLease(options: {
  redis: RedisConnection;
  key: string;
  ttlMs: number;
}): Lease {
  const { redis, key, ttlMs } = options;
  redis.defineCommand('bffLeaseHold', { numberOfKeys: 1, lua: HOLD });
  redis.defineCommand('bffLeaseRelease', { numberOfKeys: 1, lua: RELEASE });
  const token = randomUUID();
  return {
    // A Redis that cannot answer holds no lease for anyone: the caller stands by.
    hold: () =>
      redis.bffLeaseHold(key, token, ttlMs).then(
        (held) => held === 1,
        () => false,
      ),
    release: () =>
      redis.bffLeaseRelease(key, token).then(
        () => undefined,
        () => undefined,
      ),
  };
}
