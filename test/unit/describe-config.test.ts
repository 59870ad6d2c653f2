import { describe, expect, it } from 'vitest';
import { describeConfig } from '../../config/describe-config.js';
import { ConfigError, loadConfig } from '../../config/load-config.js';
import { ENV_VARIABLES, SECRET_KINDS } from '../../config/env-schema.js';
import { findLeaks, secretCanaries } from '../helpers/secret-canaries.js';

const VALID = {
  SEARCH_BASE_URL: 'http://search.internal:4001',
  CHAT_BASE_URL: 'http://chat.internal:4002',
  SEARCH_CLIENT_TOKEN: 'canary-token-value-123',
  CURSOR_SECRET: 'canary-cursor-secret-0123456789abcdef',
  REDIS_URL: 'redis://gateway:canary-redis-password@redis:6379/0',
  PORT: '8080',
};

describe('npm run config:check', () => {
  it('when the environment is valid, then every variable is listed with its effective value and where it comes from', () => {
    const text = describeConfig(VALID);
    expect(text.split('\n')[0]).toBe('Configuration is valid.');
    for (const name of ENV_VARIABLES) expect(text).toMatch(new RegExp(`^${name} `, 'm'));
    expect(text).toMatch(/^PORT +8080$/m);
    expect(text).toMatch(/^HOST +0\.0\.0\.0 \(default\)$/m);
    expect(text).toMatch(/^STATIC_DIR +\(unset\)$/m);
  });

  it('when secrets are set, then none of their values is shown, only that they are set', () => {
    const text = describeConfig(VALID);
    expect(text).not.toContain('canary-token-value-123');
    expect(text).not.toContain('canary-cursor-secret');
    expect(text).not.toContain('canary-redis-password');
    expect(text).toMatch(/^SEARCH_CLIENT_TOKEN +\*+ \(set\)$/m);
    expect(text).toMatch(/^REDIS_URL +redis:\/\/gateway:\*+@redis:6379\/0$/m);
    expect(text).toMatch(/^SESSION_SECRET +\(unset\)$/m);
    expect([...SECRET_KINDS.keys()].every((name) => ENV_VARIABLES.includes(name))).toBe(true);
  });

  it('when the environment is invalid, then it fails with the start-up error, naming variables and not values', () => {
    expect(() => describeConfig({ ...VALID, PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => describeConfig({ ...VALID, CORS_ORIGINS: 'canary-*' })).toThrow(/CORS_ORIGINS/);
    expect(() => describeConfig({ ...VALID, CORS_ORIGINS: 'canary-*' })).not.toThrow(/canary/);
  });

  const canaries = secretCanaries({
    redis: 'redis://redis.test:6379',
    otlp: 'https://collector.test:4318',
  });
  /** REDIS_PASSWORD goes with Sentinel or a cluster, never with REDIS_URL: two environments. */
  const without = (env: Record<string, string>, name: string) =>
    Object.fromEntries(Object.entries(env).filter(([key]) => key !== name));
  const withRedisUrl = without({ ...VALID, ...canaries.env }, 'REDIS_PASSWORD');
  const withSentinels = without(
    {
      ...VALID,
      ...canaries.env,
      REDIS_SENTINELS: 'sentinel.test:26379',
      REDIS_SENTINEL_MASTER: 'mymaster',
      REDIS_USERNAME: 'gateway',
    },
    'REDIS_URL',
  );

  it.each([
    ['REDIS_URL', withRedisUrl],
    ['REDIS_SENTINELS and REDIS_PASSWORD', withSentinels],
  ])(
    'when every variable the schema marks secret holds a canary (with %s), then none appears in any form, each is shown as set, and URLs keep all but their credentials',
    (_redis, env) => {
      const text = describeConfig(env);
      expect(findLeaks(canaries.secrets, { 'the output': text })).toEqual([]);
      for (const [name, kind] of SECRET_KINDS) {
        if (kind === 'value' && name in env)
          expect(text).toMatch(new RegExp(`^${name} +\\*{8} \\(set\\)$`, 'm'));
      }
      expect(text).toMatch(
        /^OTEL_EXPORTER_OTLP_ENDPOINT +https:\/\/gateway:\*{8}@collector\.test:4318\/\?db=0&Api_Key=\*{8}$/m,
      );
      expect(text).toMatch(
        /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT +https:\/\/gateway:\*{8}@collector\.test:4318\/v1\/traces\?db=0&ACCESS_TOKEN=\*{8}$/m,
      );
      if (env === withRedisUrl) {
        expect(text).toMatch(
          /^REDIS_URL +redis:\/\/gateway:\*{8}@redis\.test:6379\/0\?db=0&password=\*{8}$/m,
        );
      }
    },
  );

  it('when the two environments above are read, then every variable the schema marks secret held a canary in one of them', () => {
    const given = new Set([...Object.keys(withRedisUrl), ...Object.keys(withSentinels)]);
    expect([...SECRET_KINDS.keys()].filter((name) => !given.has(name))).toEqual([]);
    expect(SECRET_KINDS.size).toBeGreaterThanOrEqual(7);
  });

  it.each([
    'password',
    'PASSWORD',
    'pass',
    'pwd',
    'token',
    'key',
    'secret',
    'auth',
    'apikey',
    'ApiKey',
    'api_key',
    'access_token',
    'client_secret',
  ])(
    'when REDIS_URL carries a credential in its query as %s=, then that value is masked and the other parameters are shown',
    (parameter) => {
      const text = describeConfig({
        ...VALID,
        REDIS_URL: `redis://redis.test:6379/0?db=2&${parameter}=canary-query-credential&family=4`,
      });
      expect(text).not.toContain('canary-query-credential');
      expect(text).toMatch(
        new RegExp(
          `^REDIS_URL +redis://redis\\.test:6379/0\\?db=2&${parameter}=\\*{8}&family=4$`,
          'm',
        ),
      );
    },
  );
});

describe('credentials in every query-parameter form of a URL variable (issue 31 row 12)', () => {
  const CANARY = 'canary-hunter2';
  /** How REDIS_URL is shown, from `?` on. */
  const shownQuery = (url: string) => {
    const line = describeConfig({ ...VALID, REDIS_URL: url })
      .split('\n')
      .find((l) => l.startsWith('REDIS_URL '))!;
    return line.slice(line.indexOf('?'));
  };
  it.each([
    ['a `;` separator', `?db=0;password=${CANARY}`, '?db=0;password=********'],
    [
      '`;` and `&` mixed',
      `?db=0;family=4&token=${CANARY};x=1`,
      '?db=0;family=4&token=********;x=1',
    ],
    ['a percent-encoded name', `?db=0&pass%77ord=${CANARY}`, '?db=0&pass%77ord=********'],
    ['a fully percent-encoded name', `?%70%61%73%73=${CANARY}`, '?%70%61%73%73=********'],
    ['a `+` inside the name', `?api+key=${CANARY}&db=1`, '?api+key=********&db=1'],
    ['a name split by `+`', `?pass+word=${CANARY}`, '?pass+word=********'],
    ['a `+` inside the value', `?password=${CANARY}+more`, '?password=********'],
    [
      'a repeated parameter',
      `?password=${CANARY}&db=1&password=${CANARY}2`,
      '?password=********&db=1&password=********',
    ],
    ['a pair with an empty name', `?=${CANARY}&db=1`, '?=********&db=1'],
    ['empty pieces around it', `?;;password=${CANARY}&&db=1`, '?;;password=********&&db=1'],
    ['a value holding `=`', `?db=1&secret=${CANARY}==`, '?db=1&secret=********'],
  ])(
    'when REDIS_URL carries a credential with %s, then config:check masks it and keeps the rest as written',
    (_form, query, shown) => {
      const text = describeConfig({ ...VALID, REDIS_URL: `redis://redis.test:6379/0${query}` });
      expect(text).not.toContain(CANARY);
      expect(shownQuery(`redis://redis.test:6379/0${query}`)).toBe(shown);
    },
  );

  it('when the credential follows `;` in the fragment, then it is masked there too', () => {
    const text = describeConfig({
      ...VALID,
      REDIS_URL: `redis://redis.test:6379/0?db=1#x=1;token=${CANARY}`,
    });
    expect(text).not.toContain(CANARY);
    expect(text).toMatch(/^REDIS_URL +redis:\/\/redis\.test:6379\/0\?db=1#x=1;token=\*{8}$/m);
  });

  it('when a credential is in a `;`-separated or percent-encoded parameter, then the log redaction knows it in every form a server may read it', () => {
    const config = loadConfig({
      ...VALID,
      REDIS_URL: `redis://redis.test:6379/0?db=0;password=${CANARY}%2Ba+b&pass%77ord=second-canary`,
    });
    expect([...config.secrets]).toEqual(
      expect.arrayContaining([
        `${CANARY}%2Ba+b`,
        `${CANARY}+a b`,
        `${CANARY}+a+b`,
        'second-canary',
      ]),
    );
  });
});

describe('the secret marks of the environment schema', () => {
  /** GATEWAY-CONTRACT.md section 1: every variable that holds a credential. */
  const CONTRACT_SECRETS = [
    'SEARCH_CLIENT_TOKEN',
    'CHAT_API_KEY',
    'CURSOR_SECRET',
    'SESSION_SECRET',
    'METRICS_TOKEN',
    'REDIS_PASSWORD',
  ];
  const marked = (kind: string) =>
    [...SECRET_KINDS].filter(([, k]) => k === kind).map(([name]) => name);

  it("when the schema's marks are read, then exactly the contract's credentials are secret, and the URLs that may carry one are marked as such", () => {
    expect(marked('value').sort()).toEqual([...CONTRACT_SECRETS].sort());
    expect(marked('url').sort()).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      'REDIS_CACHE_URL',
      'REDIS_URL',
    ]);
  });

  it('when a variable is named like a credential, then it is marked secret (a new one cannot be forgotten)', () => {
    const named = ENV_VARIABLES.filter((name) => /(TOKEN|API_KEY|SECRET|PASSWORD)$/.test(name));
    expect(named.filter((name) => SECRET_KINDS.get(name) !== 'value')).toEqual([]);
  });

  it('when a URL variable is not marked, then it refuses credentials in the URL', () => {
    const urls = ENV_VARIABLES.filter(
      (name) => /(_URL|_ENDPOINT)$/.test(name) && !SECRET_KINDS.has(name),
    );
    expect(urls.length).toBeGreaterThan(0);
    for (const name of urls) {
      expect(() => loadConfig({ ...VALID, [name]: 'http://user:canary-pw@host.test' })).toThrow(
        new RegExp(name),
      );
    }
  });

  it('when a configuration is loaded, then its secrets are every marked value and every credential inside a marked URL', () => {
    const config = loadConfig(withRedisUrlOnly());
    expect([...config.secrets].sort()).toEqual(
      [
        'canary-token-value-123',
        'canary-cursor-secret-0123456789abcdef',
        'canary%2Bredis',
        'canary+redis',
        'canary-query-pw',
      ].sort(),
    );
  });
});

function withRedisUrlOnly() {
  return {
    ...VALID,
    REDIS_URL: 'redis://gateway:canary%2Bredis@redis:6379/0?db=1&password=canary-query-pw',
  };
}
