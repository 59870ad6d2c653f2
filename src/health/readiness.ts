/** A dependency's state as readiness reports it; only draining makes the gateway unready. */
export interface ReadinessCheck {
  name: string;
  check(): { status: 'ok' | 'degraded'; detail?: string };
}

export interface ReadinessReport {
  status: 'ok' | 'degraded' | 'draining';
  checks: Record<string, { status: 'ok' | 'degraded'; detail?: string }>;
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
