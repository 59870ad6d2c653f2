import { describe, expect, it } from 'vitest';
import { healthcheckUrl } from '../../src/health/healthcheck-url.js';

describe("the container probe's address", () => {
  it.each([
    [{}, 'http://127.0.0.1:3000/healthz'],
    [{ PORT: '8080' }, 'http://127.0.0.1:8080/healthz'],
    [{ PORT: '8080', OPS_PORT: '9091' }, 'http://127.0.0.1:9091/healthz'],
    [{ HOST: '0.0.0.0', PORT: '8080' }, 'http://127.0.0.1:8080/healthz'],
    [{ HOST: '::' }, 'http://[::1]:3000/healthz'],
    [{ HOST: '10.1.2.3', OPS_PORT: '9091' }, 'http://10.1.2.3:9091/healthz'],
    [{ HOST: 'fd00::5' }, 'http://[fd00::5]:3000/healthz'],
    [{ PORT: '', OPS_PORT: '' }, 'http://127.0.0.1:3000/healthz'],
  ])('when the environment is %j, then it probes %s', (env, url) => {
    expect(healthcheckUrl(env)).toBe(url);
  });
});
