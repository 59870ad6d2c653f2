import type { IncomingMessage, ServerResponse } from 'node:http';
import { hitParams } from '../cache/cache-status.js';
import type { CacheEntry } from '../cache/cache-entry.js';
import type { MadeEncoding } from '../cache/encodings.js';
import type { FlightClaim, FlightCoordinator } from '../cache/flight-coordinator.js';
import type { SharedState } from '../state/shared-state.js';
import type { Stage } from './edge.js';
import { hasBody } from './request-target.js';
import {
  countersOf,
  judge,
  setLimitHeaders,
  type RateLimitPolicy,
  type RateLimitVerdict,
} from './rate-limits.js';
import { sendRepresentation } from './send-representation.js';

/** A cached resource the hit path may answer, described by the feature that owns it. */
export interface CachedRoute {
  /** The exact request path; any other spelling is left to the app's router. */
  readonly path: string;
  /** Added to `Vary` on the answer (besides CORS's `Origin`). */
  readonly vary?: string;
  /**
   * The cache key of a request, validated and normalised exactly as the route itself does;
   * undefined whenever the route would answer anything but its cached representation (bad
   * input, an Accept it cannot meet, a caller it must authenticate). A route with a guard
   * answers once the guard has looked the caller up (a session read).
   */
  keyOf(req: IncomingMessage, query: string): string | undefined | Promise<string | undefined>;
  /**
   * The route's own answer (route-mounter.ts), for a route without a guard: what its handler
   * does behind Express's router, with the admission's read. The hit path runs it for a miss or
   * a stale entry, so such a request never goes through the router; a failure goes on to the app
   * (`req.failedInFront`), whose error handler answers it as it answers every other.
   */
  readonly answer?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}

declare module 'http' {
  interface IncomingMessage {
    /** Why the hit path's run of a route failed: the app's error handler answers it. */
    failedInFront?: unknown;
  }
}

/**
 * Answers fresh cache hits before the app's router (issue: "a cache hit priced like a bare
 * Express route"). The request has passed the edge (request id, log line, security headers,
 * CORS); its rate limits are counted and its entry read in one shared-state call, one Redis
 * round trip. A fresh entry is sent from here. A miss or a stale entry of a route without a
 * guard is answered from here too, by the route's own answer (`answer`): the router would only
 * find that route. Anything else (a refused request, a guarded route's miss, any other route)
 * goes on to the app, which reuses this admission rather than counting or reading again.
 */
export function createHitPath(options: {
  routes: readonly CachedRoute[];
  state: SharedState;
  /** The general rate limits: the same ones the app's guard enforces. */
  policies: readonly RateLimitPolicy[];
  /** Told of every hit it answers (the cache metrics). */
  onHit?: (key: string) => void;
  /** Keeps a compressed body a hit made with its entry (the loader's keepEncoding). */
  keepEncoding?: (key: string, entry: CacheEntry, made: MadeEncoding) => void;
  /** The fleet's single flight: a read that finds nothing takes the key's lock in the same call. */
  flights: FlightCoordinator;
  now?: () => number;
}): Stage {
  const now = options.now ?? Date.now;
  const routes = new Map(options.routes.map((route) => [route.path, route]));
  return (req, res, next) => {
    // A GET with a body is for the app to refuse; HEAD is the app's too.
    if (req.method !== 'GET' || hasBody(req)) return next();
    // The edge read the target (request-target.ts); the router reads the same split.
    const { target } = req;
    if (target === undefined) return next();
    const route = routes.get(target.path);
    const key = route?.keyOf(req, target.query);
    if (route === undefined || key === undefined) return next();
    if (typeof key === 'string') return answer(route, key, req, res, next);
    // The route's guard looks the caller up first; a failure there is the route's to answer.
    key.then(
      (found) => (found === undefined ? next() : answer(route, found, req, res, next)),
      () => next(),
    );
  };

  function answer(
    route: CachedRoute,
    key: string,
    req: IncomingMessage,
    res: ServerResponse,
    next: (error?: unknown) => void,
  ): void {
    const applicable = countersOf(options.policies, req);
    const counters = applicable.map((a) => a.counter);
    const claim = options.flights.claimRequest();
    options.state.countAndRead(counters, key, req.log, claim).then(({ counts, entry, ...read }) => {
      const verdict = judge(applicable, counts);
      req.admission = { verdict, read: { key, entry, ...read } };
      if (read.claim?.state === 'ours') releaseUnused(key, read.claim, res, options.flights);
      const t = now();
      // A refused request is the app's to answer (429 and its headers, from its guard).
      if (verdict.retryAfterSeconds !== undefined) return next();
      if (entry === undefined || t >= entry.freshUntil) {
        runRoute(route, verdict, req, res, next);
        return;
      }
      setLimitHeaders(verdict, res);
      options.onHit?.(key);
      sendRepresentation(req, res, entry, {
        cacheStatus: 'HIT',
        cacheStatusParams: hitParams(entry.freshUntil, t),
        ...(route.vary ? { vary: route.vary } : {}),
        keep: (made) => options.keepEncoding?.(key, entry, made),
      });
    }, next);
  }
}

/**
 * A miss or a stale entry: the route's own answer, with the rate limit's headers as its guard
 * would set them, when it has one (no guard); the app otherwise. A failure goes on to the app,
 * whose error handler answers it.
 */
function runRoute(
  route: CachedRoute,
  verdict: RateLimitVerdict,
  req: IncomingMessage,
  res: ServerResponse,
  next: (error?: unknown) => void,
): void {
  if (route.answer === undefined) {
    next();
    return;
  }
  setLimitHeaders(verdict, res);
  route.answer(req, res).catch((error: unknown) => {
    req.failedInFront = error;
    next();
  });
}

/**
 * A lock the request claimed but never used (refused by a limit, failed before its load) is
 * given back when the answer is done, so no other instance waits on a load that never runs.
 */
function releaseUnused(
  key: string,
  claim: FlightClaim & { state: 'ours' },
  res: ServerResponse,
  flights: FlightCoordinator,
): void {
  res.once('close', () => {
    if (!claim.consumed) void flights.adopt(key, claim).done();
  });
}
