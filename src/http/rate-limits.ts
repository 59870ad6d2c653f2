import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Config } from '../../config/load-config.js';
import type { CacheEntry } from '../cache/cache-entry.js';
import type { FlightClaim } from '../cache/flight-coordinator.js';
import { AppError } from '../errors/app-error.js';
import type { SessionManager } from '../sessions/session-manager.js';
import type { Count, CounterRequest, SharedState } from '../state/shared-state.js';
import { clientAddress, toRateLimitAddress, type TrustFunction } from './client-address.js';

/** One limit: which counter a request bumps under it, if any. */
export interface RateLimitPolicy {
  readonly name: string;
  readonly limit: number;
  readonly windowSeconds: number;
  counter(req: IncomingMessage): CounterRequest | undefined;
}

/** What a request's counters said: the headers it carries, and whether it is refused. */
export interface RateLimitVerdict {
  readonly headers: readonly [name: string, value: string][];
  /** Set when a limit is exhausted: the request is answered 429 with this Retry-After. */
  readonly retryAfterSeconds?: number;
}

/** A request's admission as the hit path made it, so the app neither counts nor reads twice. */
export interface Admission {
  readonly verdict: RateLimitVerdict;
  /** The cache read made in the same round trip. */
  readonly read?: {
    readonly key: string;
    readonly entry: CacheEntry | undefined;
    /** The key's fleet lock, claimed by the same call when it found nothing. */
    readonly claim?: FlightClaim;
  };
}

declare module 'http' {
  interface IncomingMessage {
    admission?: Admission;
  }
}

export interface RateLimits {
  /** Per client address and per live session, on every /api request. */
  readonly general: readonly RateLimitPolicy[];
  /** The stricter login limit, per client address. */
  readonly login: readonly RateLimitPolicy[];
}

/**
 * Fixed-window limits (contract section 1: RATE_LIMIT_PER_CLIENT per window, counted in the
 * shared Redis so all instances together admit the limit). The session limit counts only live
 * sessions: its counter is guarded by the session's record, so a forged cookie costs nothing.
 */
export function createRateLimits(options: {
  limits: Config['rateLimit'];
  trust: TrustFunction;
  sessions: Pick<SessionManager, 'identify'>;
  /** The raw session cookie value, if the request has one. */
  sessionOf(req: IncomingMessage): string | undefined;
}): RateLimits {
  const { limits } = options;
  const perClient = (name: string, limit: number, windowSeconds: number): RateLimitPolicy => ({
    name,
    limit,
    windowSeconds,
    counter: (req) => {
      const address = toRateLimitAddress(clientAddress(req, options.trust), limits.ipv6Prefix);
      return { key: `ratelimit:${name}:${address}`, windowMs: windowSeconds * 1000 };
    },
  });
  const perSession: RateLimitPolicy = {
    name: 'session',
    limit: limits.perSession,
    windowSeconds: limits.windowSeconds,
    counter(req) {
      const id = options.sessionOf(req);
      const session = id === undefined ? undefined : options.sessions.identify(id);
      if (session === undefined) return undefined;
      return {
        // Same hash tag as the record: one Redis Cluster slot for the guard and the counter.
        key: `ratelimit:session:{${session.idHash}}`,
        windowMs: limits.windowSeconds * 1000,
        guard: session.recordKey,
      };
    },
  };
  return {
    general: [perClient('client', limits.perClient, limits.windowSeconds), perSession],
    login: [perClient('login', limits.loginPerClient, limits.loginWindowSeconds)],
  };
}

/** The counters a request bumps under these policies, with the policy each belongs to. */
export function countersOf(policies: readonly RateLimitPolicy[], req: IncomingMessage) {
  const applicable: { policy: RateLimitPolicy; counter: CounterRequest }[] = [];
  for (const policy of policies) {
    const counter = policy.counter(req);
    if (counter !== undefined) applicable.push({ policy, counter });
  }
  return applicable;
}

/**
 * Reports the tightest applicable limit in the IETF RateLimit headers and refuses the request
 * when any limit is exhausted.
 */
export function judge(
  applicable: readonly { policy: RateLimitPolicy }[],
  counts: readonly (Count | undefined)[],
): RateLimitVerdict {
  let tightest: { policy: RateLimitPolicy; remaining: number; resetMs: number } | undefined;
  let exhausted: Count | undefined;
  const policies: string[] = [];
  applicable.forEach(({ policy }, i) => {
    const count = counts[i];
    if (count === undefined) return;
    policies.push(`"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`);
    const remaining = Math.max(0, policy.limit - count.count);
    if (tightest === undefined || remaining < tightest.remaining) {
      tightest = { policy, remaining, resetMs: count.resetMs };
    }
    if (
      count.count > policy.limit &&
      (exhausted === undefined || count.resetMs > exhausted.resetMs)
    ) {
      exhausted = count;
    }
  });
  if (tightest === undefined) return { headers: [] };
  const headers: [string, string][] = [
    ['RateLimit-Policy', policies.join(', ')],
    [
      'RateLimit',
      `"${tightest.policy.name}";r=${tightest.remaining};t=${Math.ceil(tightest.resetMs / 1000)}`,
    ],
  ];
  return exhausted === undefined
    ? { headers }
    : { headers, retryAfterSeconds: Math.max(1, Math.ceil(exhausted.resetMs / 1000)) };
}

/** The verdict's RateLimit headers on the answer, whoever sends it. */
export function setLimitHeaders(verdict: RateLimitVerdict, res: ServerResponse): void {
  for (const [name, value] of verdict.headers) res.setHeader(name, value);
}

/** Puts a verdict on the response; throws the 429 when it refuses the request. */
export function enforce(verdict: RateLimitVerdict, res: ServerResponse): void {
  setLimitHeaders(verdict, res);
  if (verdict.retryAfterSeconds !== undefined) {
    const seconds = verdict.retryAfterSeconds;
    throw new AppError('RATE_LIMITED', `Too many requests; try again in ${seconds} s.`, {
      retryAfterSeconds: seconds,
    });
  }
}

/**
 * The rate limit as middleware: counts the request under `policies`, unless the hit path
 * already did (its admission rides on the request), then enforces the verdict.
 */
export function createRateLimitGuard(
  policies: readonly RateLimitPolicy[],
  state: SharedState,
): RequestHandler {
  return async (req, res, next) => {
    let verdict = req.admission?.verdict;
    if (verdict === undefined) {
      const applicable = countersOf(policies, req);
      const { counts } = await state.countAndRead(
        applicable.map((a) => a.counter),
        undefined,
        req.log,
      );
      verdict = judge(applicable, counts);
    }
    enforce(verdict, res);
    next();
  };
}

/** One login attempt, counted from the moment it started. */
export interface Attempt {
  /** It did not cost a guess (it succeeded, or never reached the check): give it back. */
  forgive(): Promise<void>;
}

/**
 * The login limit (contract section 6, Limits): it counts failed attempts only, and an attempt
 * counts from the moment it starts until it succeeds. Counting first and forgiving successes
 * afterwards is what makes it hold under concurrency: however many wrong passwords arrive at
 * once, the counter passes the limit before any of them past it reaches the chat server. A user
 * who logs in often is never locked out, because each success is given back.
 */
export interface AttemptLimit {
  /** Counts this attempt, or refuses it (429 with Retry-After) past the limit. */
  begin(req: IncomingMessage, res: ServerResponse): Promise<Attempt>;
}

export function createAttemptLimit(
  policies: readonly RateLimitPolicy[],
  state: SharedState,
): AttemptLimit {
  return {
    async begin(req, res) {
      const applicable = countersOf(policies, req);
      const counters = applicable.map((a) => a.counter);
      const { counts, unavailable } = await state.countAndRead(counters, undefined, req.log);
      const forgive = () => state.uncount(counters, req.log);
      if (unavailable) {
        // Counted by this instance alone, the limit would let each instance's share through
        // (contract section 7, Fail closed): no guess reaches the chat server meanwhile.
        await forgive();
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'Logins are unavailable right now; try again shortly.',
          { retryAfterSeconds: 1 },
        );
      }
      const verdict = judge(applicable, counts);
      if (verdict.retryAfterSeconds !== undefined) {
        // A refused attempt reached nobody: the count stays what was tried.
        await forgive();
      }
      enforce(verdict, res);
      return { forgive };
    },
  };
}
