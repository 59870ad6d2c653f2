import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Config } from '../../config/load-config.js';
import { AppError } from '../errors/app-error.js';

/** The part of a rate-limiter-flexible limiter this module uses. */
type Consumer = Pick<RateLimiterAbstract, 'consume'>;

interface Policy {
  name: string;
  limit: number;
  windowSeconds: number;
  limiter: Consumer;
  key(req: Request): string | undefined;
}

export interface RateLimits {
  /** Per client address and per session, on every /api request. */
  general: RequestHandler;
  /** The stricter login limit, per client address. */
  login: RequestHandler;
}

export interface RateLimitOptions {
  limits: Config['rateLimit'];
  /** Shared counters across instances; absent means per-instance counters only. */
  redis: Redis | undefined;
  /** False while Redis is known to be failing: count in memory without waiting for it. */
  redisUsable(): boolean;
  /** The raw session cookie value, if the request has one. */
  sessionOf(req: Request): string | undefined;
}

/**
 * Fixed-window limits kept in Redis so all instances count together. When Redis is down or
 * slow, rate-limiter-flexible's insurance limiter counts in memory instead: each instance
 * still enforces the limit on its own (a floor, never a 500, never no limit at all).
 */
export function createRateLimits(options: RateLimitOptions): RateLimits {
  const { limits } = options;
  const limiter = (keyPrefix: string, points: number, duration: number): Consumer => {
    const insuranceLimiter = new RateLimiterMemory({ keyPrefix, points, duration });
    if (!options.redis) return insuranceLimiter;
    const shared = new RateLimiterRedis({
      storeClient: options.redis,
      keyPrefix: `ratelimit:${keyPrefix}`,
      points,
      duration,
      rejectIfRedisNotReady: true,
      insuranceLimiter,
    });
    return { consume: (key) => (options.redisUsable() ? shared : insuranceLimiter).consume(key) };
  };
  const policy = (
    name: string,
    limit: number,
    windowSeconds: number,
    key: Policy['key'],
  ): Policy => ({
    name,
    limit,
    windowSeconds,
    key,
    limiter: limiter(name, limit, windowSeconds),
  });
  const clientKey = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';
  const sessionKey = (req: Request) => {
    const id = options.sessionOf(req);
    return id === undefined ? undefined : createHash('sha256').update(id).digest('base64url');
  };

  return {
    general: enforce([
      policy('client', limits.perClient, limits.windowSeconds, clientKey),
      policy('session', limits.perSession, limits.windowSeconds, sessionKey),
    ]),
    login: enforce([policy('login', limits.loginPerClient, limits.loginWindowSeconds, clientKey)]),
  };
}

/** Consumes one point of each policy; reports the tightest in RateLimit headers (IETF draft). */
function enforce(policies: Policy[]): RequestHandler {
  return async (req, res, next) => {
    // Every applicable policy counts the request, so they are asked at once: one round trip.
    const applicable = policies.flatMap((policy) => {
      const key = policy.key(req);
      return key === undefined ? [] : [{ policy, key }];
    });
    const results = await Promise.all(
      applicable.map(async ({ policy, key }) => {
        try {
          return { policy, res: await policy.limiter.consume(key), limited: false };
        } catch (rejection) {
          if (!(rejection instanceof RateLimiterRes)) throw rejection;
          return { policy, res: rejection, limited: true };
        }
      }),
    );
    if (results.length === 0) {
      next();
      return;
    }
    setHeaders(res, results);
    const hit = results.find((r) => r.limited);
    if (hit) {
      const seconds = Math.max(1, Math.ceil(hit.res.msBeforeNext / 1000));
      throw new AppError('RATE_LIMITED', `Too many requests; try again in ${seconds} s.`, {
        retryAfterSeconds: seconds,
      });
    }
    next();
  };
}

function setHeaders(res: Response, results: { policy: Policy; res: RateLimiterRes }[]): void {
  res.setHeader(
    'RateLimit-Policy',
    results
      .map(({ policy }) => `"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`)
      .join(', '),
  );
  const tightest = results.reduce((a, b) =>
    b.res.remainingPoints < a.res.remainingPoints ? b : a,
  );
  const reset = Math.ceil(tightest.res.msBeforeNext / 1000);
  res.setHeader(
    'RateLimit',
    `"${tightest.policy.name}";r=${tightest.res.remainingPoints};t=${reset}`,
  );
}
