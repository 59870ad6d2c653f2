import { z } from 'zod';
import { secret, secretKindOf, urlWithSecrets, type SecretKind } from './secret-marks.js';
import {
  baseUrl,
  hostPorts,
  integer,
  origins,
  otlpUrl,
  redisUrl,
  trustProxy,
} from './env-values.js';

/**
 * The one list of environment variables (GATEWAY-CONTRACT.md section 1). Every added variable
 * has a default; secrets have none. `.env.example` and docs/configuration.md mirror this schema,
 * and a test keeps them in step. A credential is marked where it is declared (`secret`, or
 * `urlWithSecrets` for a URL that may hold one); everything that shows, logs or scrubs values
 * reads that mark (secret-marks.ts).
 */

export const EnvSchema = z
  .object({
    PORT: integer(0, 65_535).default(3000),
    HOST: z.string().min(1).default('0.0.0.0'),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info'),

    CHAT_BASE_URL: baseUrl,
    CHAT_AUTH_MODE: z.enum(['session', 'service']).default('session'),
    CHAT_EMAIL: z.email({ error: 'must be an email address' }).optional(),
    CHAT_API_KEY: secret(z.string().min(1).optional()),
    /**
     * Keep cached chat data fresh from the chat server's event queue; default on when the
     * service account (CHAT_EMAIL, CHAT_API_KEY) is set.
     */
    CHAT_EVENTS: z.enum(['on', 'off']).optional(),
    CHAT_TIMEOUT_MS: integer(50, 60_000).default(5000),
    /** Status update, emoji deletion and each login call: writes are never retried. */
    CHAT_WRITE_TIMEOUT_MS: integer(50, 60_000).default(8000),
    CHAT_CONNECT_TIMEOUT_MS: integer(10, 30_000).default(1000),

    SEARCH_BASE_URL: baseUrl,
    SEARCH_CLIENT_TOKEN: secret(z.string().min(1, 'must not be empty')),
    SEARCH_MAX_K: integer(1, 100).default(10),
    /**
     * Where result links point (contract section 5): `upstream` keeps the search service's
     * redirect URLs; `gateway` makes them the path-absolute /api/search/url, query kept.
     */
    SEARCH_LINKS: z.enum(['upstream', 'gateway']).default('upstream'),
    SEARCH_TIMEOUT_MS: integer(50, 60_000).default(5000),
    SEARCH_REDIRECT_TIMEOUT_MS: integer(50, 60_000).default(3000),
    SEARCH_CONNECT_TIMEOUT_MS: integer(10, 30_000).default(1000),
    /** Signs `next` cursors; unset means a random per-process key (cursors die with the process). */
    CURSOR_SECRET: secret(z.string().min(32, 'must be at least 32 characters').optional()),

    REDIS_URL: urlWithSecrets(redisUrl.optional()),
    /** Seed nodes of a Redis Cluster, instead of REDIS_URL. */
    REDIS_CLUSTER_NODES: hostPorts.optional(),
    /** Sentinels watching the master named REDIS_SENTINEL_MASTER, instead of REDIS_URL. */
    REDIS_SENTINELS: hostPorts.optional(),
    REDIS_SENTINEL_MASTER: z.string().min(1).optional(),
    /** Credentials and TLS of cluster or sentinel-managed nodes (a REDIS_URL holds its own). */
    REDIS_USERNAME: z.string().min(1).optional(),
    REDIS_PASSWORD: secret(z.string().min(1).optional()),
    REDIS_TLS: z.enum(['on', 'off']).default('off'),
    REDIS_KEY_PREFIX: z.string().min(1).default('bff:'),
    REDIS_COMMAND_TIMEOUT_MS: integer(5, 10_000).default(100),
    /**
     * How long a session write (or delete) waits for a replica to confirm it (Redis WAIT, on
     * the session-write connections only), with Sentinel or Cluster. Past it the write stands,
     * counted as unreplicated (contract section 7).
     */
    REDIS_REPLICA_WAIT_MS: integer(0, 5000).default(50),
    /** A Redis of its own for cache entries and their flight locks (contract section 7). */
    REDIS_CACHE_URL: urlWithSecrets(redisUrl.optional()),
    /**
     * While the cache shares its Redis with state: no new entry once that Redis's used_memory
     * passes this; unset: half its maxmemory, or 256 MiB without one.
     */
    CACHE_REDIS_MAX_BYTES: integer(1024 * 1024, 1024 * 1024 * 1024 * 1024).optional(),
    /** Byte budget of the in-process cache, counted as the stored entries' bytes. */
    CACHE_MAX_BYTES: integer(64 * 1024, 1024 * 1024 * 1024).default(8 * 1024 * 1024),
    /** Spreads expiries of entries written together by up to ± this share of their TTL. */
    CACHE_TTL_JITTER_PERCENT: integer(0, 50).default(10),
    /** Upper bound of a Retry-After passed on from an upstream (contract section 3). */
    RETRY_AFTER_MAX_SECONDS: integer(1, 86_400).default(3600),
    BREAKER_FAILURE_PERCENT: integer(1, 100).default(50),
    BREAKER_MIN_REQUESTS: integer(1, 10_000).default(10),
    BREAKER_WINDOW_SECONDS: integer(1, 3600).default(10),
    BREAKER_OPEN_SECONDS: integer(1, 3600).default(10),

    CORS_ORIGINS: origins.default([]),
    /** Prometheus metrics at GET /metrics (contract section 6). */
    METRICS: z.enum(['on', 'off']).default('on'),
    /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
    METRICS_TOKEN: secret(z.string().min(16, 'must be at least 16 characters').optional()),
    /** When set, /healthz, /readyz and /metrics are served on this port only, outside MAX_CONNECTIONS. */
    OPS_PORT: integer(0, 65_535).optional(),
    /** Traces go over OTLP/HTTP to `{endpoint}/v1/traces` when set; no SDK is loaded otherwise. */
    OTEL_EXPORTER_OTLP_ENDPOINT: urlWithSecrets(otlpUrl.optional()),
    /** The traces endpoint itself (used as given), instead of OTEL_EXPORTER_OTLP_ENDPOINT. */
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: urlWithSecrets(otlpUrl.optional()),
    /** OTLP over HTTP only: protobuf (the standard default) or JSON; gRPC is not built in. */
    OTEL_EXPORTER_OTLP_PROTOCOL: z
      .enum(['http/protobuf', 'http/json'], {
        error: 'must be http/protobuf or http/json (gRPC is not supported)',
      })
      .default('http/protobuf'),
    OTEL_SERVICE_NAME: z.string().min(1).default('bff-gateway'),
    /** A built frontend served at / from the gateway's own origin (contract section 1). */
    STATIC_DIR: z.string().min(1).optional(),
    /** Where a served page may load images from: the search service's image host. */
    STATIC_IMG_SRC: z
      .string()
      .regex(/^[^;,\r\n]+$/, 'must be CSP source expressions separated by spaces')
      .default("'self' data: https:"),
    /** Encrypts the chat API keys kept in sessions; unset means a random per-process key. */
    SESSION_SECRET: secret(z.string().min(32, 'must be at least 32 characters').optional()),
    SESSION_COOKIE_SECURE: z.stringbool({ error: 'must be true or false' }).default(true),
    SESSION_COOKIE_SAMESITE: z.enum(['strict', 'lax', 'none']).default('strict'),
    SESSION_IDLE_TIMEOUT_SECONDS: integer(60, 7 * 86_400).default(1800),
    SESSION_ABSOLUTE_TIMEOUT_SECONDS: integer(60, 30 * 86_400).default(43_200),
    /**
     * Which proxies' X-Forwarded-For to believe: `false` (none), a hop count, or a comma-separated
     * list of addresses, CIDRs or Express's names (loopback, linklocal, uniquelocal). Never `true`.
     */
    TRUST_PROXY: trustProxy.default(false),
    RATE_LIMIT_WINDOW_SECONDS: integer(1, 3600).default(60),
    RATE_LIMIT_PER_CLIENT: integer(1, 1_000_000).default(600),
    RATE_LIMIT_PER_SESSION: integer(1, 1_000_000).default(300),
    LOGIN_RATE_LIMIT_WINDOW_SECONDS: integer(1, 86_400).default(900),
    LOGIN_RATE_LIMIT_PER_CLIENT: integer(1, 10_000).default(10),
    /**
     * 0: the per-client limit is counted exactly in the shared Redis on every request. Above 0:
     * each instance counts it locally and adds its counts to Redis at most this often (the
     * per-session and login limits stay exact); a fleet may overshoot by instances × rate ×
     * interval (contract section 1).
     */
    RATE_LIMIT_SYNC_MS: integer(0, 60_000).default(0),
    /** An IPv6 client counts by this prefix of its address (64: one household or server). */
    RATE_LIMIT_IPV6_PREFIX: integer(1, 128).default(64),
    /** `br`/`gzip` for answers of at least COMPRESSION_MIN_BYTES (contract section 4). */
    COMPRESSION: z.enum(['on', 'off']).default('on'),
    COMPRESSION_MIN_BYTES: integer(0, 1024 * 1024 * 1024).default(1024),
    /**
     * Open event streams one instance holds (GET /api/events); unset: a quarter of the
     * connection cap, so ordinary requests keep room.
     */
    EVENTS_MAX_STREAMS: integer(1, 1_000_000).optional(),
    /**
     * Open event streams one chat user (session mode) or one client address (service mode,
     * when TRUST_PROXY tells clients apart) may hold on one instance; past it 429.
     */
    EVENTS_MAX_STREAMS_PER_CLIENT: integer(1, 100_000).default(6),
    /** Seconds between heartbeat comments on an idle event stream. */
    EVENTS_HEARTBEAT_SECONDS: integer(1, 300).default(25),
    BODY_LIMIT_BYTES: integer(64, 10 * 1024 * 1024).default(16_384),
    /** One deadline for every part of GET /api/bootstrap. */
    BOOTSTRAP_TIMEOUT_MS: integer(50, 60_000).default(3000),
    /** Client connections held at once; unset: derived from the process's descriptor limit. */
    MAX_CONNECTIONS: integer(1, 1_000_000).optional(),
    HEADERS_TIMEOUT_MS: integer(1000, 120_000).default(10_000),
    REQUEST_TIMEOUT_MS: integer(1000, 600_000).default(30_000),
    KEEP_ALIVE_TIMEOUT_MS: integer(1000, 600_000).default(65_000),
    CLIENT_IDLE_TIMEOUT_MS: integer(1000, 600_000).default(30_000),
    RESPONSE_BUFFER_MAX_BYTES: integer(64 * 1024, 256 * 1024 * 1024).default(1024 * 1024),
    UPSTREAM_MAX_RESPONSE_BYTES: integer(1024, 256 * 1024 * 1024).default(8 * 1024 * 1024),
    UPSTREAM_MAX_JSON_DEPTH: integer(8, 1000).default(64),
    /** In-process sessions (no Redis) at most; at the cap a new login is refused with 503. */
    SESSION_MEMORY_MAX: integer(1, 10_000_000).default(10_000),
    /** Live sessions one chat user may hold, fleet-wide; a login past it ends the oldest. */
    SESSION_MAX_PER_USER: integer(1, 10_000).default(10),
    SHUTDOWN_TIMEOUT_MS: integer(100, 120_000).default(15_000),
    /** After SIGTERM, /readyz says 503 this long before the listener stops accepting. */
    SHUTDOWN_DRAIN_DELAY_MS: integer(0, 60_000).default(3000),
  })
  // `when` makes these run even when other variables failed, so one message names them all.
  .refine((env) => env.CHAT_AUTH_MODE !== 'service' || env.CHAT_EMAIL !== undefined, {
    path: ['CHAT_EMAIL'],
    message: 'is required when CHAT_AUTH_MODE=service',
    when: () => true,
  })
  .refine((env) => env.CHAT_AUTH_MODE !== 'service' || env.CHAT_API_KEY !== undefined, {
    path: ['CHAT_API_KEY'],
    message: 'is required when CHAT_AUTH_MODE=service',
    when: () => true,
  })
  .refine(
    (env) =>
      [env.REDIS_URL, env.REDIS_CLUSTER_NODES, env.REDIS_SENTINELS].filter((v) => v !== undefined)
        .length <= 1,
    {
      path: ['REDIS_URL'],
      message: 'REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS are mutually exclusive: set one',
      when: () => true,
    },
  )
  .refine(
    (env) =>
      env.REDIS_CACHE_URL === undefined ||
      env.REDIS_URL !== undefined ||
      env.REDIS_CLUSTER_NODES !== undefined ||
      env.REDIS_SENTINELS !== undefined,
    {
      path: ['REDIS_CACHE_URL'],
      message:
        'needs REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS (the Redis that holds sessions and limits)',
      when: () => true,
    },
  )
  .refine((env) => env.REDIS_SENTINELS === undefined || env.REDIS_SENTINEL_MASTER !== undefined, {
    path: ['REDIS_SENTINEL_MASTER'],
    message: 'is required with REDIS_SENTINELS (the name of the master the Sentinels watch)',
    when: () => true,
  })
  .refine((env) => env.REDIS_SENTINEL_MASTER === undefined || env.REDIS_SENTINELS !== undefined, {
    path: ['REDIS_SENTINEL_MASTER'],
    message: 'needs REDIS_SENTINELS',
    when: () => true,
  })
  .refine(
    (env) =>
      (env.REDIS_CLUSTER_NODES === undefined && env.REDIS_SENTINELS === undefined) ||
      (env.CURSOR_SECRET !== undefined && env.SESSION_SECRET !== undefined),
    {
      path: ['CURSOR_SECRET'],
      message:
        'and SESSION_SECRET are required with REDIS_CLUSTER_NODES or REDIS_SENTINELS: every instance must share them',
      when: () => true,
    },
  )
  .refine(
    (env) =>
      env.REDIS_URL === undefined ||
      (env.REDIS_USERNAME === undefined &&
        env.REDIS_PASSWORD === undefined &&
        env.REDIS_TLS === 'off'),
    {
      path: ['REDIS_PASSWORD'],
      message:
        'REDIS_USERNAME, REDIS_PASSWORD and REDIS_TLS are for cluster or sentinel nodes; with REDIS_URL they go in the URL (rediss:// for TLS)',
      when: () => true,
    },
  )
  .refine(
    (env) =>
      env.CHAT_EVENTS !== 'on' || (env.CHAT_EMAIL !== undefined && env.CHAT_API_KEY !== undefined),
    {
      path: ['CHAT_EVENTS'],
      message: 'on needs CHAT_EMAIL and CHAT_API_KEY (the queue is the service account’s)',
      when: () => true,
    },
  )
  .refine((env) => env.HEADERS_TIMEOUT_MS <= env.REQUEST_TIMEOUT_MS, {
    path: ['HEADERS_TIMEOUT_MS'],
    message: 'must not exceed REQUEST_TIMEOUT_MS (the headers are part of the request)',
    when: () => true,
  })
  .refine((env) => env.SESSION_COOKIE_SAMESITE !== 'none' || env.SESSION_COOKIE_SECURE !== false, {
    path: ['SESSION_COOKIE_SAMESITE'],
    message: 'none needs SESSION_COOKIE_SECURE=true (browsers drop such cookies otherwise)',
    when: () => true,
  });

export type Env = z.output<typeof EnvSchema>;

/**
 * Every variable name of the environment's own schema. The cached routes' windows add theirs
 * (cache-variables.ts).
 */
export const ENV_VARIABLES = Object.keys(EnvSchema.shape) as (keyof Env)[];

/** How each variable holding a credential holds it, read from the schema's marks. */
export const SECRET_KINDS: ReadonlyMap<keyof Env, SecretKind> = new Map(
  ENV_VARIABLES.flatMap((name) => {
    const kind = secretKindOf(EnvSchema.shape[name]);
    return kind === undefined ? [] : [[name, kind] as const];
  }),
);
