import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Breaker } from '../resilience/circuit-breaker.js';
import { CHAT_EVENTS_STATES, type ChatEventsStatus } from './chat-events-status.js';
import { PlainHistogram } from './plain-histogram.js';
import { replaceProcessCountMetrics } from './process-counts.js';
import { cumulative } from './cumulative-counter.js';

export type CacheResult = 'hit' | 'miss' | 'stale';
/** A cached route's `cache.resource` in the route table: the label's values come from there. */
export type CacheResource = string;

/**
 * The gateway's Prometheus metrics (contract section 6), one registry per gateway. When turned
 * off (METRICS=off) every recording is a no-op and /metrics is not served.
 */
export interface Metrics {
  readonly enabled: boolean;
  readonly contentType: string;
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  observeUpstream(upstream: string, operation: string, outcome: string, seconds: number): void;
  countCache(resource: CacheResource, result: CacheResult): void;
  /** Breakers whose state the gauge reports at each scrape. */
  watchBreakers(breakers: Readonly<Record<string, Breaker>>): void;
  /** The chat event queue's state, events applied, registrations and lag, read at each scrape. */
  watchChatEvents(status: () => ChatEventsStatus): void;
  /** The event streams' count, events sent and streams closed, read at each scrape. */
  watchEventStreams(status: () => EventStreamsStatus): void;
  /** What the bulkheads of contract section 7 counted, read at each scrape. */
  watchIsolation(status: () => IsolationStatus): void;
  render(): Promise<string>;
}

/** What the event streams report (contract section 2.2, Metrics). */
export interface EventStreamsStatus {
  readonly open: number;
  /** Events written to one stream each, by event name; heartbeats not counted. */
  readonly sent: Readonly<Record<string, number>>;
  /** Streams that were open and ended, by reason. */
  readonly closed: Readonly<Record<string, number>>;
  /** Streams refused before they opened, by reason (`per_client`, `full`, `draining`). */
  readonly refused: Readonly<Record<string, number>>;
}

/** What the bulkheads counted (contract section 7), cumulative since the start. */
export interface IsolationStatus {
  /** Session writes and deletes no replica confirmed within REDIS_REPLICA_WAIT_MS. */
  readonly sessionWritesUnreplicated: number;
  /** Sessions ended by the gateway, by reason (`user_limit`: past SESSION_MAX_PER_USER). */
  readonly sessionsEnded: Readonly<Record<string, number>>;
  /** Cache entries or encodings not stored, by reason (`memory`: CACHE_REDIS_MAX_BYTES). */
  readonly cacheStoreSkipped: Readonly<Record<string, number>>;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const BREAKER_STATE = { closed: 0, 'half-open': 1, open: 2 } as const;

export function createMetrics(options: {
  enabled: boolean;
  /** The `resource` label's values: every cache resource of the route table. */
  cacheResources?: readonly string[];
}): Metrics {
  const registry = new Registry();
  if (!options.enabled) {
    return {
      enabled: false,
      contentType: registry.contentType,
      observeRequest: () => undefined,
      observeUpstream: () => undefined,
      countCache: () => undefined,
      watchBreakers: () => undefined,
      watchChatEvents: () => undefined,
      watchEventStreams: () => undefined,
      watchIsolation: () => undefined,
      render: () => Promise.resolve(''),
    };
  }
  collectDefaultMetrics({ register: registry });
  // The five that walk every descriptor, handle and resource, made cheaper (process-counts.ts).
  replaceProcessCountMetrics(registry);
  const requests = new PlainHistogram(
    {
      name: 'http_server_request_duration_seconds',
      help: 'Duration of HTTP requests the gateway answered, by route template and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    },
    registry,
  );
  const upstreams = new PlainHistogram(
    {
      name: 'gateway_upstream_request_duration_seconds',
      help: 'Duration of calls to an upstream service, by operation and outcome.',
      labelNames: ['upstream', 'operation', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    },
    registry,
  );
  const cacheCounts = cacheCounter(registry, options.cacheResources ?? []);
  const watched = breakerGauge(registry);
  const watchChatEvents = chatEventMetrics(registry);
  const watchEventStreams = eventStreamMetrics(registry);
  const watchIsolation = isolationMetrics(registry);
  return {
    enabled: true,
    contentType: registry.contentType,
    observeRequest(method, route, status, seconds) {
      const label = METHODS.has(method) ? method : 'other';
      requests.observe([label, route, String(status)], seconds);
    },
    observeUpstream: (upstream, operation, outcome, seconds) =>
      upstreams.observe([upstream, operation, outcome], seconds),
    countCache(resource, result) {
      const counts = cacheCounts[resource];
      if (counts) counts[result] += 1;
    },
    watchBreakers(breakers) {
      Object.assign(watched, breakers);
    },
    watchChatEvents,
    watchEventStreams,
    watchIsolation,
    render: () => registry.metrics(),
  };
}

/**
 * gateway_cache_requests_total: counted in plain numbers on the hit path, handed to
 * prom-client at each scrape (its inc() validates and hashes the labels every time).
 */
function cacheCounter(
  registry: Registry,
  resources: readonly string[],
): Record<CacheResource, Record<CacheResult, number>> {
  const zero = () => ({ hit: 0, miss: 0, stale: 0 });
  const cacheCounts: Record<CacheResource, Record<CacheResult, number>> = Object.fromEntries(
    resources.map((resource) => [resource, zero()]),
  );
  const cacheReported = structuredClone(cacheCounts);
  new Counter({
    name: 'gateway_cache_requests_total',
    help: 'Cached reads, by resource and result.',
    labelNames: ['resource', 'result'] as const,
    registers: [registry],
    collect() {
      for (const [resource, counts] of Object.entries(cacheCounts)) {
        const reported = cacheReported[resource] ?? zero();
        for (const result of ['hit', 'miss', 'stale'] as const) {
          const delta = counts[result] - reported[result];
          if (delta > 0) this.inc({ resource, result }, delta);
          reported[result] = counts[result];
        }
        cacheReported[resource] = reported;
      }
    },
  });
  return cacheCounts;
}

/** gateway_circuit_breaker_state of every breaker watched, read at each scrape. */
function breakerGauge(registry: Registry): Record<string, Breaker> {
  const watched: Record<string, Breaker> = {};
  new Gauge({
    name: 'gateway_circuit_breaker_state',
    help: 'State of each circuit breaker: 0 closed, 1 half-open, 2 open.',
    labelNames: ['breaker'] as const,
    registers: [registry],
    collect() {
      for (const [name, breaker] of Object.entries(watched)) {
        this.set({ breaker: name }, BREAKER_STATE[breaker.state]);
      }
    },
  });
  return watched;
}

/** The chat event queue's state, events applied, registrations and lag, read at each scrape. */
function chatEventMetrics(registry: Registry): (status: () => ChatEventsStatus) => void {
  let chatEvents: (() => ChatEventsStatus) | undefined;
  let counted = { applied: 0, registrations: 0 };
  new Gauge({
    name: 'gateway_chat_events_queue_state',
    help: 'The chat event queue of this instance: 1 for its current state, 0 for the others.',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      if (!chatEvents) return;
      const { state } = chatEvents();
      for (const candidate of CHAT_EVENTS_STATES) {
        this.set({ state: candidate }, candidate === state ? 1 : 0);
      }
    },
  });
  const increase = (name: 'applied' | 'registrations', help: string) =>
    new Counter({
      name: `gateway_chat_events_${name}_total`,
      help,
      registers: [registry],
      collect() {
        if (!chatEvents) return;
        const now = chatEvents()[name];
        if (now > counted[name]) this.inc(now - counted[name]);
        counted = { ...counted, [name]: now };
      },
    });
  increase('applied', 'Events taken from the chat event queue (heartbeats included).');
  increase('registrations', 'Chat event queues registered (a lost queue is registered anew).');
  new Gauge({
    name: 'gateway_chat_events_lag_seconds',
    help: 'Seconds since the chat event queue last answered a poll.',
    registers: [registry],
    collect() {
      const lag = chatEvents?.().lagSeconds;
      if (lag !== undefined) this.set(lag);
    },
  });
  return (status) => {
    chatEvents = status;
  };
}

/** The event streams' count, events sent and streams closed, read at each scrape. */
function eventStreamMetrics(registry: Registry): (status: () => EventStreamsStatus) => void {
  let eventStreams: (() => EventStreamsStatus) | undefined;
  new Gauge({
    name: 'gateway_event_streams',
    help: 'Event streams (GET /api/events) open on this instance.',
    registers: [registry],
    collect() {
      this.set(eventStreams?.().open ?? 0);
    },
  });
  const read = () => eventStreams?.();
  cumulative(registry, read, {
    name: 'gateway_events_sent_total',
    help: 'Events written to event streams, one per stream (heartbeats not counted).',
    label: 'event',
    counts: (s) => s.sent,
  });
  cumulative(registry, read, {
    name: 'gateway_event_streams_closed_total',
    help: 'Event streams that were open and ended, by reason.',
    label: 'reason',
    counts: (s) => s.closed,
  });
  cumulative(registry, read, {
    name: 'gateway_event_streams_refused_total',
    help: 'Event streams refused before they opened, by reason.',
    label: 'reason',
    counts: (s) => s.refused,
  });
  return (status) => {
    eventStreams = status;
  };
}

/** The bulkheads' counts (contract section 7), read at each scrape. */
function isolationMetrics(registry: Registry): (status: () => IsolationStatus) => void {
  let isolation: (() => IsolationStatus) | undefined;
  const read = () => isolation?.();
  cumulative(registry, read, {
    name: 'gateway_session_writes_unreplicated_total',
    help: 'Session writes and deletes that no replica confirmed within REDIS_REPLICA_WAIT_MS (they stand).',
    counts: (s) => ({ '': s.sessionWritesUnreplicated }),
  });
  cumulative(registry, read, {
    name: 'gateway_sessions_ended_total',
    help: 'Sessions the gateway ended itself, by reason.',
    label: 'reason',
    counts: (s) => s.sessionsEnded,
  });
  cumulative(registry, read, {
    name: 'gateway_cache_store_skipped_total',
    help: 'Cache entries or encodings not stored, by reason.',
    label: 'reason',
    counts: (s) => s.cacheStoreSkipped,
  });
  return (status) => {
    isolation = status;
  };
}
