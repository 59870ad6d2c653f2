import type { RedisConnection } from '../redis/redis-client.js';

/**
 * Each chat user's live sessions across the fleet, for SESSION_MAX_PER_USER (contract section 7,
 * Quotas per caller): a sorted set per user, `sessions-of:v1:{<userId>}`, of session id hashes
 * scored by creation time. On a Cluster the set sits in its user's slot and each record in its
 * own, so no script spans both: members whose record is gone (logged out, expired) are found
 * with one EXISTS each and passed in, and the script, on the set alone, drops them, ends the
 * oldest past the limit and adds the new session in one step, so concurrent logins of one user
 * (on any instance) never leave more than the limit in it.
 */
export interface UserSessionIndex {
  /**
   * Adds a session just stored; resolves to the user's sessions it took out of the set to keep
   * it within `max`, oldest first: the caller ends them as a logout would. `isGone` says
   * whether a member's record no longer exists; it is asked only when the user is at the limit.
   */
  add(
    session: { userId: number; idHash: string; createdAt: number; absoluteExpiresAt: number },
    isGone: (idHash: string) => Promise<boolean>,
  ): Promise<string[]>;
  /** Takes an ended session out of its user's set. */
  remove(userId: number, idHash: string): Promise<void>;
}

/*
 * KEYS[1] the user's set. ARGV: the new member, its creation time, the limit, the set's TTL
 * (ms), the creation time before which a member is past its absolute expiry, whether members
 * were checked ('1') and then the members found gone.
 * Returns {0, members} when the user is at the limit and nobody checked which are gone yet;
 * else adds the member and returns {1, ended}.
 */
const ADD = `
local key = KEYS[1]
redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. ARGV[5])
for i = 7, #ARGV do redis.call('ZREM', key, ARGV[i]) end
redis.call('ZREM', key, ARGV[1])
local held = redis.call('ZCARD', key)
local max = tonumber(ARGV[3])
if held >= max and ARGV[6] == '0' then
  return {0, redis.call('ZRANGE', key, 0, -1)}
end
local ended = {}
if held >= max then
  local popped = redis.call('ZPOPMIN', key, held - max + 1)
  for i = 1, #popped, 2 do ended[#ended + 1] = popped[i] end
end
redis.call('ZADD', key, ARGV[2], ARGV[1])
if redis.call('PTTL', key) < tonumber(ARGV[4]) then redis.call('PEXPIRE', key, ARGV[4]) end
return {1, ended}
`;

declare module 'ioredis' {
  interface RedisCommander {
    bffAddUserSession(key: string, ...args: (string | number)[]): Promise<[number, string[]]>;
  }
}

export function createUserSessionIndex(options: {
  redis: RedisConnection;
  /** SESSION_MAX_PER_USER. */
  max: number;
  now?: () => number;
}): UserSessionIndex {
  const { redis, max } = options;
  const now = options.now ?? Date.now;
  redis.defineCommand('bffAddUserSession', { numberOfKeys: 1, lua: ADD });
  const keyOf = (userId: number) => `sessions-of:v1:{${userId}}`;

  return {
    async add(session, isGone) {
      const t = now();
      const lifetimeMs = session.absoluteExpiresAt - session.createdAt;
      const run = (checked: boolean, gone: readonly string[]) =>
        redis.bffAddUserSession(
          keyOf(session.userId),
          session.idHash,
          session.createdAt,
          max,
          Math.max(1, session.absoluteExpiresAt - t),
          t - lifetimeMs,
          checked ? '1' : '0',
          ...gone,
        );
      const [added, members] = await run(false, []);
      if (added === 1) return members;
      // At the limit: which of the user's sessions still exist decides who must go.
      const found = await Promise.all(members.map(isGone));
      const [, ended] = await run(
        true,
        members.filter((_, i) => found[i]),
      );
      return ended;
    },
    async remove(userId, idHash) {
      await redis.zrem(keyOf(userId), idHash);
    },
  };
}
