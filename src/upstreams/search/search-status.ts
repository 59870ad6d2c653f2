import { randomUUID } from 'node:crypto';
import type { Upstream } from '../http/upstream.js';

export interface SearchStatus {
  /** Whether the search service's status endpoint answered 2xx within the last few seconds. */
  available(): Promise<boolean>;
}

/**
 * `GET {SEARCH_BASE_URL}/v1/status` (search document 4.3: a 2xx means up), probed at most
 * once per `intervalMs` whoever asks, and shared: callers within the interval get the last
 * answer, and callers while a probe runs wait for that one probe. A failing probe means
 * "unavailable", never an error.
 */
export function createSearchStatus(options: {
  upstream: Upstream;
  clientToken: string;
  deadlineMs: number;
  intervalMs: number;
  now?: () => number;
}): SearchStatus {
  const now = options.now ?? Date.now;
  let known: { available: boolean; at: number } | undefined;
  let probing: Promise<boolean> | undefined;
  const probe = () =>
    options.upstream
      .call({
        operation: 'status',
        method: 'GET',
        path: '/v1/status',
        headers: { 'service-client-token': options.clientToken },
        requestId: `status-${randomUUID()}`,
        deadlineMs: options.deadlineMs,
        accept: (response) => response.status >= 200 && response.status < 300,
      })
      .catch(() => false)
      .then((available) => {
        known = { available, at: now() };
        probing = undefined;
        return available;
      });
  return {
    available() {
      if (known && now() - known.at < options.intervalMs) return Promise.resolve(known.available);
      probing ??= probe();
      return probing;
    },
  };
}
