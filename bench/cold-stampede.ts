import { randomUUID } from 'node:crypto';
import type { BenchProcess } from './bench-process.js';

export interface Stampede {
  /** The row it reports, e.g. G5 or G6@<commit>. */
  label: string;
  requests: number;
  instances: number;
  ok: number;
  upstreamCalls: number;
}

/**
 * Concurrent requests for one new key, spread over `urls` (G5: one fresh gateway; G6: two
 * instances on a Redis Cluster): how many upstream calls they made, counted by the simulators.
 */
export async function coldStampede(
  label: string,
  urls: readonly string[],
  sims: BenchProcess,
  requests = 200,
): Promise<Stampede> {
  const control = `http://127.0.0.1:${String(sims.ready['controlPort'])}`;
  const calls = async () =>
    ((await (await fetch(control)).json()) as { searches: number }).searches;
  const before = await calls();
  const path = `/api/search?q=stampede+${randomUUID().slice(0, 8)}&k=10`;
  const answers = await Promise.all(
    Array.from({ length: requests }, (_, i) =>
      fetch(`${urls[i % urls.length]!}${path}`).then((r) => r.status),
    ),
  );
  return {
    label,
    requests,
    instances: urls.length,
    ok: answers.filter((s) => s === 200).length,
    upstreamCalls: (await calls()) - before,
  };
}
