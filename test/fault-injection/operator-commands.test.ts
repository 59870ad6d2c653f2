import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, repoRoot, startGatewayProcess, useChaosEnvironment } from './harness.js';

/*
 * What an operator runs against the production build: the config check and the container's
 * probe, as processes with an environment.
 */

const env = useChaosEnvironment();

async function run(script: string, args: string[], environment: Record<string, string>) {
  const child = spawn(process.execPath, [join(repoRoot(), script), ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

const VALID = {
  SEARCH_BASE_URL: 'http://search.internal:4001',
  CHAT_BASE_URL: 'http://chat.internal:4002',
  SEARCH_CLIENT_TOKEN: 'canary-operator-token',
};

describe('the config check', () => {
  it('when the environment is valid, then it prints the effective configuration with secrets masked and exits 0, starting nothing', async () => {
    const result = await run('dist/src/main.js', ['--check-config'], VALID);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Configuration is valid\./);
    expect(result.stdout).toMatch(/^SEARCH_BASE_URL +http:\/\/search\.internal:4001$/m);
    expect(result.stdout).not.toContain('canary-operator-token');
    expect(result.stderr).toBe('');
  });

  it('when the environment is invalid, then it exits 78 with the start-up message on stderr', async () => {
    const result = await run('dist/src/main.js', ['--check-config'], {
      ...VALID,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain(
      'OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json',
    );
    expect(result.stdout).toBe('');
  });
});

describe("the image's probe", () => {
  it('when the gateway serves its operations port, then the probe asks it there and fails once it stops', async () => {
    const ops = await freePort();
    const gw = await startGatewayProcess({
      upstreams: env().endpoints,
      redisUrl: env().redis.url,
      env: { OPS_PORT: String(ops) },
    });
    const probeEnv = { HOST: '127.0.0.1', PORT: new URL(gw.url).port, OPS_PORT: String(ops) };
    try {
      expect((await run('dist/src/healthcheck.js', [], probeEnv)).code).toBe(0);
    } finally {
      await gw.dispose();
    }
    expect((await run('dist/src/healthcheck.js', [], probeEnv)).code).toBe(1);
  });
});
