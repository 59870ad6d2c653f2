import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

export type TrustProxy = false | number | readonly string[];
export type TrustFunction = (address: string, hop: number) => boolean;

/**
 * Which proxies' X-Forwarded-For to believe, compiled once the way Express compiles its
 * `trust proxy` setting: the app is given this same function, so Express's `req.ip` and the
 * hit path's client address (rate-limit keys) can never disagree.
 */
export function compileTrust(trust: TrustProxy): TrustFunction {
  if (trust === false) return proxyaddr.compile([]);
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return proxyaddr.compile([...trust]);
}

/** The client's address as Express's `req.ip` reports it. */
export function clientAddress(req: IncomingMessage, trust: TrustFunction): string {
  return proxyaddr(req, trust);
}
