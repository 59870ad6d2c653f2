import { describe, expect, it } from 'vitest';
import { SECRET_VARIABLES, describeConfig } from '../../config/describe-config.js';
import { ConfigError } from '../../config/load-config.js';
import { ENV_VARIABLES } from '../../config/env-schema.js';

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
    expect([...SECRET_VARIABLES].every((name) => ENV_VARIABLES.includes(name as never))).toBe(true);
  });

  it('when the environment is invalid, then it fails with the start-up error, naming variables and not values', () => {
    expect(() => describeConfig({ ...VALID, PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => describeConfig({ ...VALID, CORS_ORIGINS: 'canary-*' })).toThrow(/CORS_ORIGINS/);
    expect(() => describeConfig({ ...VALID, CORS_ORIGINS: 'canary-*' })).not.toThrow(/canary/);
  });
});
