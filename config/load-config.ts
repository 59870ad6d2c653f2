import { EnvSchema } from './env-schema.js';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly logLevel: string;
  readonly chat: {
    readonly baseUrl: string;
    readonly authMode: 'session' | 'service';
    readonly email: string | undefined;
    readonly apiKey: string | undefined;
    readonly timeoutMs: number;
    readonly writeTimeoutMs: number;
    readonly connectTimeoutMs: number;
    readonly channelFoldersCache: CacheWindows;
  };
  readonly search: {
    readonly baseUrl: string;
    readonly clientToken: string;
    readonly maxK: number;
    readonly timeoutMs: number;
    readonly redirectTimeoutMs: number;
    readonly connectTimeoutMs: number;
    readonly cache: CacheWindows;
    readonly cursorSecret: string | undefined;
  };
  readonly redis: {
    readonly url: string | undefined;
    readonly keyPrefix: string;
    readonly commandTimeoutMs: number;
  };
  readonly cacheMaxEntries: number;
  readonly cacheTtlJitterRatio: number;
  readonly breaker: BreakerThresholds;
  readonly session: {
    readonly secret: string | undefined;
    readonly cookieSecure: boolean;
    readonly sameSite: 'strict' | 'lax' | 'none';
    readonly idleTimeoutSeconds: number;
    readonly absoluteTimeoutSeconds: number;
  };
  /** Express's `trust proxy` value. */
  readonly trustProxy: false | number | readonly string[];
  readonly rateLimit: {
    readonly windowSeconds: number;
    readonly perClient: number;
    readonly perSession: number;
    readonly loginWindowSeconds: number;
    readonly loginPerClient: number;
  };
  readonly corsOrigins: readonly string[];
  readonly bodyLimitBytes: number;
  readonly shutdownTimeoutMs: number;
  readonly shutdownDrainDelayMs: number;
}

/** When an upstream's circuit opens, and for how long calls then fail fast. */
export interface BreakerThresholds {
  readonly failurePercent: number;
  readonly minRequests: number;
  readonly windowSeconds: number;
  readonly openSeconds: number;
}

/** How long an entry is fresh, then served stale while refreshing, then kept for errors only. */
export interface CacheWindows {
  readonly ttlSeconds: number;
  readonly staleSeconds: number;
  readonly staleIfErrorSeconds: number;
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads the environment once. Empty strings count as unset (compose files and `.env` lines
 * like `REDIS_URL=` mean "not configured"). Messages name variables, never their values.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? 'environment');
      const message =
        issue.code === 'invalid_type' && present[name] === undefined
          ? 'is required'
          : issue.message;
      return `${name} ${message}`;
    });
    throw new ConfigError([...new Set(problems)]);
  }
  const e = parsed.data;
  return deepFreeze({
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    chat: {
      baseUrl: e.CHAT_BASE_URL,
      authMode: e.CHAT_AUTH_MODE,
      email: e.CHAT_EMAIL,
      apiKey: e.CHAT_API_KEY,
      timeoutMs: e.CHAT_TIMEOUT_MS,
      writeTimeoutMs: e.CHAT_WRITE_TIMEOUT_MS,
      connectTimeoutMs: e.CHAT_CONNECT_TIMEOUT_MS,
      channelFoldersCache: {
        ttlSeconds: e.CHANNEL_FOLDERS_CACHE_TTL_SECONDS,
        staleSeconds: e.CHANNEL_FOLDERS_CACHE_STALE_SECONDS,
        staleIfErrorSeconds: e.CHANNEL_FOLDERS_CACHE_STALE_IF_ERROR_SECONDS,
      },
    },
    search: {
      baseUrl: e.SEARCH_BASE_URL,
      clientToken: e.SEARCH_CLIENT_TOKEN,
      maxK: e.SEARCH_MAX_K,
      timeoutMs: e.SEARCH_TIMEOUT_MS,
      redirectTimeoutMs: e.SEARCH_REDIRECT_TIMEOUT_MS,
      connectTimeoutMs: e.SEARCH_CONNECT_TIMEOUT_MS,
      cache: {
        ttlSeconds: e.SEARCH_CACHE_TTL_SECONDS,
        staleSeconds: e.SEARCH_CACHE_STALE_SECONDS,
        staleIfErrorSeconds: e.SEARCH_CACHE_STALE_IF_ERROR_SECONDS,
      },
      cursorSecret: e.CURSOR_SECRET,
    },
    redis: {
      url: e.REDIS_URL,
      keyPrefix: e.REDIS_KEY_PREFIX,
      commandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
    },
    cacheMaxEntries: e.CACHE_MAX_ENTRIES,
    cacheTtlJitterRatio: e.CACHE_TTL_JITTER_PERCENT / 100,
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
    },
    trustProxy: e.TRUST_PROXY,
    rateLimit: {
      windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS,
      perClient: e.RATE_LIMIT_PER_CLIENT,
      perSession: e.RATE_LIMIT_PER_SESSION,
      loginWindowSeconds: e.LOGIN_RATE_LIMIT_WINDOW_SECONDS,
      loginPerClient: e.LOGIN_RATE_LIMIT_PER_CLIENT,
    },
    corsOrigins: e.CORS_ORIGINS,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    shutdownDrainDelayMs: e.SHUTDOWN_DRAIN_DELAY_MS,
  });
}

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null) deepFreeze(child as object);
  }
  return Object.freeze(value);
}
