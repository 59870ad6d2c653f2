import type { Config } from '../../config/load-config.js';
import type { Metrics } from '../observability/metrics.js';
import { createUpstream, type Upstream } from '../upstreams/http/upstream.js';
import type { Wiring } from './wiring.js';

/** The gateway's three ways out, each with its own pool and breaker. */
export interface GatewayUpstreams {
  search: Upstream;
  /**
   * The click-tracking redirect, with a breaker of its own (contract section 6): its query is
   * the caller's choice, so its failures must never pause searches, nor an open search circuit
   * clicks.
   */
  redirect: Upstream;
  chat: Upstream;
}

/** Connections kept to each upstream at most. */
const UPSTREAM_CONNECTIONS = 64;

/** Each pool registers its close: a forced stop destroys the calls still running. */
export function createGatewayUpstreams(
  options: Omit<Wiring, 'now'> & { metrics: Metrics },
): GatewayUpstreams {
  const { config, logger, metrics, lifecycle } = options;
  const upstream = (
    source: 'search' | 'chat',
    section: Config['search'] | Config['chat'],
    breakerName: string = source,
  ) => {
    const made = createUpstream({
      source,
      breakerName,
      baseUrl: section.baseUrl,
      connectTimeoutMs: section.connectTimeoutMs,
      maxDeadlineMs: Math.max(
        section.timeoutMs,
        'redirectTimeoutMs' in section ? section.redirectTimeoutMs : section.writeTimeoutMs,
      ),
      breaker: config.breaker,
      logger,
      maxResponseBytes: config.upstreamLimits.maxResponseBytes,
      connections: UPSTREAM_CONNECTIONS,
      metrics,
    });
    lifecycle.onClose(`${breakerName} upstream`, ({ force }) => made.close({ force }));
    return made;
  };
  return {
    search: upstream('search', config.search),
    redirect: upstream('search', config.search, 'search-redirect'),
    chat: upstream('chat', config.chat),
  };
}
