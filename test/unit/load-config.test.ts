import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config/load-config.js';
import { ROUTE_TABLE } from '../../src/features/route-table.js';

const minimal = {
  CHAT_BASE_URL: 'https://chat.example.test',
  SEARCH_BASE_URL: 'https://search.example.test/svc/',
  SEARCH_CLIENT_TOKEN: 'search-token-canary-1234567890',
};

function problemsOf(env: Record<string, string | undefined>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it("when a cached route's variable is bad, then the one error names it beside the environment's", () => {
    const problems = (() => {
      try {
        loadConfig({ ...minimal, PORT: 'eighty', CHANNELS_CACHE_TTL_SECONDS: 'soon' }, ROUTE_TABLE);
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
        throw error;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^PORT /),
        expect.stringMatching(/^CHANNELS_CACHE_TTL_SECONDS /),
      ]),
    );
    expect(
      loadConfig({ ...minimal, CHANNELS_CACHE_STALE_SECONDS: '7' }, ROUTE_TABLE).cache['channels'],
    ).toEqual({ ttlSeconds: 60, staleSeconds: 7, staleIfErrorSeconds: 0 });
  });

  it('when only the required variables are set, then every default applies', () => {
    const config = loadConfig(minimal, ROUTE_TABLE);
    expect(config.port).toBe(3000);
    expect(config.chat.authMode).toBe('session');
    expect(config.search.baseUrl).toBe('https://search.example.test/svc');
    expect(config.search.maxK).toBe(10);
    expect(config.redis.topology).toEqual({ kind: 'none' });
    expect(config.corsOrigins).toEqual([]);
    expect(Object.isFrozen(config.cache['search'])).toBe(true);
    // Each cached route of the table brings its windows, defaulted from its declaration.
    for (const route of ROUTE_TABLE) {
      if (route.cache) expect(config.cache[route.cache.resource]).toEqual(route.cache.windows);
    }
  });

  it('when several variables are bad, then one error names every one of them', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      SEARCH_BASE_URL: 'ftp://search.example.test',
      CHAT_AUTH_MODE: 'service',
      SEARCH_MAX_K: '101',
      REDIS_URL: 'http://127.0.0.1:6379',
      CORS_ORIGINS: 'https://app.example.test/path',
    });
    const named = problems.map((p) => p.split(' ')[0]);
    expect(named).toEqual(
      expect.arrayContaining([
        'PORT',
        'CHAT_BASE_URL',
        'SEARCH_BASE_URL',
        'SEARCH_CLIENT_TOKEN',
        'CHAT_EMAIL',
        'CHAT_API_KEY',
        'SEARCH_MAX_K',
        'REDIS_URL',
        'CORS_ORIGINS',
      ]),
    );
    expect(problems).toContain('SEARCH_CLIENT_TOKEN is required');
    expect(problems).toContain('CHAT_API_KEY is required when CHAT_AUTH_MODE=service');
  });

  it('when a secret is malformed, then its value never appears in the message', () => {
    const secret = 'rediss-canary-password';
    const error = (() => {
      try {
        return loadConfig({
          ...minimal,
          REDIS_URL: `not a url ${secret}`,
          CURSOR_SECRET: 'short-canary',
        });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).not.toContain(secret);
    expect((error as Error).message).not.toContain('short-canary');
  });

  it('when a base URL carries credentials or a query, then it is refused', () => {
    expect(problemsOf({ ...minimal, SEARCH_BASE_URL: 'https://u:p@search.example.test' })).toEqual([
      'SEARCH_BASE_URL must not contain credentials',
    ]);
    expect(problemsOf({ ...minimal, CHAT_BASE_URL: 'https://chat.example.test/?x=1' })).toEqual([
      'CHAT_BASE_URL must not contain a query or fragment',
    ]);
  });

  it('when a variable is an empty string, then it counts as unset', () => {
    expect(loadConfig({ ...minimal, REDIS_URL: '', PORT: '' }).port).toBe(3000);
  });

  it.each([
    ['false', false],
    ['1', 1],
    ['loopback, 10.0.0.0/8', ['loopback', '10.0.0.0/8']],
  ])('when TRUST_PROXY is %s, then Express gets %j', (value, expected) => {
    expect(loadConfig({ ...minimal, TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each(['true', 'everyone', '10.0.0.0/8; rm'])(
    'when TRUST_PROXY is %s, then it is refused',
    (value) => {
      expect(problemsOf({ ...minimal, TRUST_PROXY: value })).toEqual([
        'TRUST_PROXY must be false, a hop count, or a list of proxy addresses',
      ]);
    },
  );

  it('when SameSite=None is asked without Secure, then it is refused', () => {
    expect(
      problemsOf({
        ...minimal,
        SESSION_COOKIE_SAMESITE: 'none',
        SESSION_COOKIE_SECURE: 'false',
      })[0],
    ).toMatch(/^SESSION_COOKIE_SAMESITE none needs/);
  });

  it('when CORS_ORIGINS lists origins, then they are parsed and trimmed', () => {
    const config = loadConfig({
      ...minimal,
      CORS_ORIGINS: 'https://a.example.test, http://localhost:5173',
    });
    expect(config.corsOrigins).toEqual(['https://a.example.test', 'http://localhost:5173']);
  });
});

describe('Redis topologies (contract section 1)', () => {
  const secrets = {
    CURSOR_SECRET: 'c'.repeat(32),
    SESSION_SECRET: 's'.repeat(32),
  };

  it('when REDIS_CLUSTER_NODES is set with the shared secrets, then the cluster seeds are parsed', () => {
    const config = loadConfig({
      ...minimal,
      ...secrets,
      REDIS_CLUSTER_NODES: 'redis-a:7000, redis-b:7001,[::1]:7002',
      REDIS_PASSWORD: 'pw',
      REDIS_TLS: 'on',
    });
    expect(config.redis.topology).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'redis-a', port: 7000 },
        { host: 'redis-b', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
    expect(config.redis.tls).toBe(true);
  });

  it('when REDIS_SENTINELS and REDIS_SENTINEL_MASTER are set, then the sentinel topology is used', () => {
    const config = loadConfig({
      ...minimal,
      ...secrets,
      REDIS_SENTINELS: 's1:26379,s2:26379',
      REDIS_SENTINEL_MASTER: 'mymaster',
    });
    expect(config.redis.topology).toMatchObject({ kind: 'sentinel', master: 'mymaster' });
  });

  it.each([
    ['two topologies', { REDIS_URL: 'redis://r:6379', REDIS_CLUSTER_NODES: 'a:1' }, 'REDIS_URL'],
    [
      'all three',
      {
        REDIS_URL: 'redis://r:6379',
        REDIS_CLUSTER_NODES: 'a:1',
        REDIS_SENTINELS: 's:2',
        REDIS_SENTINEL_MASTER: 'm',
      },
      'mutually exclusive',
    ],
    [
      'sentinels without a master name',
      { REDIS_SENTINELS: 's:26379' },
      'REDIS_SENTINEL_MASTER is required',
    ],
    [
      'a master name without sentinels',
      { REDIS_SENTINEL_MASTER: 'm' },
      'REDIS_SENTINEL_MASTER needs REDIS_SENTINELS',
    ],
    [
      'a node that is not host:port',
      { REDIS_CLUSTER_NODES: 'a:1,redis-b' },
      'REDIS_CLUSTER_NODES must list host:port',
    ],
    [
      'a password beside REDIS_URL',
      { REDIS_URL: 'redis://r:6379', REDIS_PASSWORD: 'pw' },
      'REDIS_PASSWORD',
    ],
  ])('when %s, then it is a start-up error naming the variables', (_, env, message) => {
    const problems = problemsOf({ ...minimal, ...secrets, ...env }).join('; ');
    expect(problems).toContain(message);
    expect(problems).not.toContain('pw');
  });

  it.each([
    ['REDIS_CLUSTER_NODES', { REDIS_CLUSTER_NODES: 'a:7000' }],
    ['REDIS_SENTINELS', { REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm' }],
  ])('when %s is set without the shared secrets, then it is a start-up error', (_, env) => {
    expect(problemsOf({ ...minimal, ...env }).join('; ')).toContain(
      'CURSOR_SECRET and SESSION_SECRET are required',
    );
    expect(problemsOf({ ...minimal, CURSOR_SECRET: 'c'.repeat(32), ...env }).join('; ')).toContain(
      'SESSION_SECRET are required',
    );
  });
});

describe('CHAT_EVENTS', () => {
  const service = { CHAT_AUTH_MODE: 'service', CHAT_EMAIL: 'bot@example.test', CHAT_API_KEY: 'k' };
  it('when the service account is set, then the event queue is on by default', () => {
    expect(loadConfig({ ...minimal, ...service }).chat.events).toBe(true);
    expect(loadConfig({ ...minimal, ...service, CHAT_EVENTS: 'off' }).chat.events).toBe(false);
  });

  it('when there is no service account, then it is off, and on is a start-up error', () => {
    expect(loadConfig(minimal).chat.events).toBe(false);
    expect(problemsOf({ ...minimal, CHAT_EVENTS: 'on' }).join()).toContain(
      'CHAT_EVENTS on needs CHAT_EMAIL and CHAT_API_KEY',
    );
  });
});
