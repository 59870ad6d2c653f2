import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * Contract section 6: with no OTLP endpoint, no SDK is loaded. Only the API (a no-op until an
 * SDK registers) may be imported statically; the SDK, exporters and instrumentations are
 * imported by src/observability/tracing.ts, dynamically, when an endpoint is set.
 */

const SRC = new URL('../../src/', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('the tracing SDK is loaded only on demand', () => {
  it('when the sources are read, then no module imports an OpenTelemetry package but the API statically', () => {
    const offenders = sources(SRC).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/^import[^;]*from '(@opentelemetry\/[^']+)'/gm)]
        .map((m) => m[1]!)
        .filter((name) => name !== '@opentelemetry/api')
        .map((name) => `${file}: ${name}`),
    );
    expect(offenders).toEqual([]);
  });

  it('when tracing.ts is read, then it imports the SDK with import(), after the endpoint check', () => {
    const text = readFileSync(join(SRC, 'observability/tracing.ts'), 'utf8');
    const check = text.indexOf('if (tracing.endpoint === undefined) return undefined;');
    expect(check).toBeGreaterThan(0);
    expect(text.indexOf("import('@opentelemetry/sdk-trace-node')")).toBeGreaterThan(check);
  });
});
