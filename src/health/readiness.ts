import { z } from 'zod';

/** A dependency's state as readiness reports it; only draining makes the gateway unready. */
export interface CheckResult {
  status: 'ok' | 'degraded';
  detail?: string;
  [extra: string]: unknown;
}

export interface ReadinessCheck {
  name: string;
  check(): CheckResult;
}

export interface ReadinessReport {
  status: 'ok' | 'degraded' | 'draining';
  checks: Record<string, CheckResult>;
}

export interface Readiness {
  report(): ReadinessReport;
  startDraining(): void;
  readonly draining: boolean;
}

export function createReadiness(checks: readonly ReadinessCheck[]): Readiness {
  let draining = false;
  return {
    get draining() {
      return draining;
    },
    startDraining() {
      draining = true;
    },
    report() {
      const results = Object.fromEntries(checks.map((c) => [c.name, c.check()]));
      const degraded = Object.values(results).some((r) => r.status === 'degraded');
      return { status: draining ? 'draining' : degraded ? 'degraded' : 'ok', checks: results };
    },
  };
}

/** The answers of /healthz and /readyz, as the OpenAPI document describes them. */
export const HealthBody = z.object({ status: z.literal('ok') });
export const ReadinessBody = z.object({
  status: z.enum(['ok', 'degraded', 'draining']),
  checks: z.record(
    z.string(),
    z.looseObject({ status: z.enum(['ok', 'degraded']), detail: z.string().optional() }),
  ),
});
