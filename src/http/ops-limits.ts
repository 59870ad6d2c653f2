import type { ClientLimits } from './http-server.js';

/**
 * How long the operations listener waits for a request's headers. Probes and scrapers send
 * theirs in one write, so a connection still without them after this is holding a slot, not
 * asking something; the public listener's HEADERS_TIMEOUT_MS (10 s by default) is made for
 * browsers on slow links. Node checks it once a second, so a silent connection goes within
 * about 3 s (contract section 7, "The operations port answers").
 */
export const OPS_HEADERS_TIMEOUT_MS = 2000;

/** The whole request, body included: probes and scrapes have none. */
export const OPS_REQUEST_TIMEOUT_MS = 4000;

/**
 * The operations listener's bounds: the public ones with a cap of its own and the short
 * header and request timeouts above (never longer than the public ones, should an operator
 * have set those shorter still).
 */
export function operationsLimits(
  client: Omit<ClientLimits, 'maxConnections'>,
  maxConnections: number,
): ClientLimits {
  return {
    ...client,
    maxConnections,
    headersTimeoutMs: Math.min(client.headersTimeoutMs, OPS_HEADERS_TIMEOUT_MS),
    requestTimeoutMs: Math.min(client.requestTimeoutMs, OPS_REQUEST_TIMEOUT_MS),
  };
}
