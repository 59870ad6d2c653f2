import type { z } from 'zod';
import { EnvSchema, SECRET_KINDS, type Env } from './env-schema.js';
import { credentialsOf } from './secret-marks.js';

/*
 * The environment's variables grouped the way the code uses them: the Config type is inferred
 * from this mapping, never written out a second time, and it is the only place a variable's
 * name meets its use.
 */

/** Which Redis holds the shared state: none (this process), one server, a cluster or Sentinel. */
export type RedisTopology =
  | { kind: 'none' }
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: { host: string; port: number }[] }
  | { kind: 'sentinel'; sentinels: { host: string; port: number }[]; master: string };

function redisTopology(e: Env): RedisTopology {
  if (e.REDIS_CLUSTER_NODES) return { kind: 'cluster', nodes: e.REDIS_CLUSTER_NODES };
  if (e.REDIS_SENTINELS && e.REDIS_SENTINEL_MASTER) {
    return { kind: 'sentinel', sentinels: e.REDIS_SENTINELS, master: e.REDIS_SENTINEL_MASTER };
  }
  return e.REDIS_URL === undefined ? { kind: 'none' } : { kind: 'single', url: e.REDIS_URL };
}

/** Every secret string a parsed environment holds: what log lines and upstream text lose. */
function secretValues(e: Env): string[] {
  const values = [...SECRET_KINDS].flatMap(([name, kind]) => credentialsOf(kind, e[name]));
  return [...new Set(values)];
}

/**
 * The variables grouped the way the code uses them. This mapping is the only place a variable
 * name meets its use: the Config type is inferred from it, never written out a second time.
 */
/** The upstreams, Redis and the cache, grouped the way the code uses them. */
const backendsOf = (e: Env) => ({
  port: e.PORT,
  host: e.HOST,
  logLevel: e.LOG_LEVEL,
  chat: {
    baseUrl: e.CHAT_BASE_URL,
    authMode: e.CHAT_AUTH_MODE,
    email: e.CHAT_EMAIL,
    apiKey: e.CHAT_API_KEY,
    events:
      e.CHAT_EVENTS === 'on' ||
      (e.CHAT_EVENTS === undefined && e.CHAT_EMAIL !== undefined && e.CHAT_API_KEY !== undefined),
    timeoutMs: e.CHAT_TIMEOUT_MS,
    writeTimeoutMs: e.CHAT_WRITE_TIMEOUT_MS,
    connectTimeoutMs: e.CHAT_CONNECT_TIMEOUT_MS,
  },
  search: {
    baseUrl: e.SEARCH_BASE_URL,
    clientToken: e.SEARCH_CLIENT_TOKEN,
    maxK: e.SEARCH_MAX_K,
    links: e.SEARCH_LINKS,
    timeoutMs: e.SEARCH_TIMEOUT_MS,
    redirectTimeoutMs: e.SEARCH_REDIRECT_TIMEOUT_MS,
    connectTimeoutMs: e.SEARCH_CONNECT_TIMEOUT_MS,
    cursorSecret: e.CURSOR_SECRET,
  },
  redis: {
    topology: redisTopology(e),
    username: e.REDIS_USERNAME,
    password: e.REDIS_PASSWORD,
    tls: e.REDIS_TLS === 'on',
    keyPrefix: e.REDIS_KEY_PREFIX,
    commandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
    replicaWaitMs: e.REDIS_REPLICA_WAIT_MS,
    /** The cache's own Redis, when it has one (REDIS_CACHE_URL naming another server). */
    cacheUrl: e.REDIS_CACHE_URL,
    cacheMaxBytes: e.CACHE_REDIS_MAX_BYTES,
  },
  cacheMaxBytes: e.CACHE_MAX_BYTES,
  cacheTtlJitterRatio: e.CACHE_TTL_JITTER_PERCENT / 100,
  retryAfterMaxSeconds: e.RETRY_AFTER_MAX_SECONDS,
});

/** How the gateway serves its callers and stops. */
const servingOf = (e: Env) => ({
  breaker: {
    failurePercent: e.BREAKER_FAILURE_PERCENT,
    minRequests: e.BREAKER_MIN_REQUESTS,
    windowSeconds: e.BREAKER_WINDOW_SECONDS,
    openSeconds: e.BREAKER_OPEN_SECONDS,
  },
  session: {
    secret: e.SESSION_SECRET,
    cookieSecure: e.SESSION_COOKIE_SECURE,
    sameSite: e.SESSION_COOKIE_SAMESITE,
    idleTimeoutSeconds: e.SESSION_IDLE_TIMEOUT_SECONDS,
    absoluteTimeoutSeconds: e.SESSION_ABSOLUTE_TIMEOUT_SECONDS,
    memoryMax: e.SESSION_MEMORY_MAX,
    maxPerUser: e.SESSION_MAX_PER_USER,
  },
  /** Express's `trust proxy` value. */
  trustProxy: e.TRUST_PROXY,
  rateLimit: {
    windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS,
    perClient: e.RATE_LIMIT_PER_CLIENT,
    perSession: e.RATE_LIMIT_PER_SESSION,
    loginWindowSeconds: e.LOGIN_RATE_LIMIT_WINDOW_SECONDS,
    loginPerClient: e.LOGIN_RATE_LIMIT_PER_CLIENT,
    ipv6Prefix: e.RATE_LIMIT_IPV6_PREFIX,
    syncMs: e.RATE_LIMIT_SYNC_MS,
  },
  compression: { enabled: e.COMPRESSION === 'on', minBytes: e.COMPRESSION_MIN_BYTES },
  events: {
    maxStreams: e.EVENTS_MAX_STREAMS,
    maxStreamsPerClient: e.EVENTS_MAX_STREAMS_PER_CLIENT,
    heartbeatSeconds: e.EVENTS_HEARTBEAT_SECONDS,
  },
  corsOrigins: e.CORS_ORIGINS,
  metrics: { enabled: e.METRICS === 'on', token: e.METRICS_TOKEN },
  tracing: {
    endpoint: e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? e.OTEL_EXPORTER_OTLP_ENDPOINT,
    protocol: e.OTEL_EXPORTER_OTLP_PROTOCOL,
    serviceName: e.OTEL_SERVICE_NAME,
  },
  opsPort: e.OPS_PORT,
  staticSite: { dir: e.STATIC_DIR, imgSrc: e.STATIC_IMG_SRC },
  bodyLimitBytes: e.BODY_LIMIT_BYTES,
  bootstrapTimeoutMs: e.BOOTSTRAP_TIMEOUT_MS,
  client: {
    maxConnections: e.MAX_CONNECTIONS,
    headersTimeoutMs: e.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    idleTimeoutMs: e.CLIENT_IDLE_TIMEOUT_MS,
    responseBufferMaxBytes: e.RESPONSE_BUFFER_MAX_BYTES,
  },
  upstreamLimits: {
    maxResponseBytes: e.UPSTREAM_MAX_RESPONSE_BYTES,
    maxJsonDepth: e.UPSTREAM_MAX_JSON_DEPTH,
  },
  shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
  /** The longest any upstream call may take: what a stop has to wait for at most. */
  longestUpstreamDeadlineMs: Math.max(
    e.CHAT_TIMEOUT_MS,
    e.CHAT_WRITE_TIMEOUT_MS,
    e.SEARCH_TIMEOUT_MS,
    e.SEARCH_REDIRECT_TIMEOUT_MS,
  ),
  shutdownDrainDelayMs: e.SHUTDOWN_DRAIN_DELAY_MS,
  /** The credentials above as strings (contract section 1): removed from logs and upstream text. */
  secrets: secretValues(e),
});

export const ConfigSchema = EnvSchema.transform((e) => ({ ...backendsOf(e), ...servingOf(e) }));

type DeepReadonly<T> = T extends readonly (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** The validated, frozen configuration every factory is built from. */
export type Config = DeepReadonly<z.output<typeof ConfigSchema>>;
/** When an upstream's circuit opens, and for how long calls then fail fast. */
export type BreakerThresholds = Config['breaker'];
/** How long an entry is fresh, then served stale while refreshing, then kept for errors only. */
