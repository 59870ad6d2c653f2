import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
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
  const trusted = proxyaddr.compile([...trust]);
  // A proxy written with a port in X-Forwarded-For is still that proxy.
  return (address, hop) => trusted(withoutPort(address), hop);
}

/**
 * The client's address as Express's `req.ip` reports it, without the port some proxies write
 * after it (`198.51.100.7:1234`, `[2001:db8::1]:443`): a port names a connection, not a client,
 * so with it every connection would be a client of its own, with a fresh rate-limit budget
 * (contract section 7, "Edges").
 */
export function clientAddress(req: IncomingMessage, trust: TrustFunction): string {
  return withoutPort(proxyaddr(req, trust));
}

const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const BRACKETED_IPV6 = /^\[([^\]]+)\](?::\d{1,5})?$/;

/**
 * An address as X-Forwarded-For may write it, without its port: an IPv4 address followed by
 * `:port`, or an IPv6 address in brackets with or without one (RFC 3986's form; a bare IPv6
 * address has no port, its colons are its own). Anything else is left as it is.
 */
export function withoutPort(address: string): string {
  const written = IPV4_WITH_PORT.exec(address) ?? BRACKETED_IPV6.exec(address);
  const bare = written?.[1];
  return bare !== undefined && ipaddr.isValid(bare) ? bare : address;
}

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const CANONICAL_IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

/**
 * The address a client is counted under by the rate limits (contract section 1,
 * RATE_LIMIT_IPV6_PREFIX). One household or server holds a whole IPv6 prefix and may rotate
 * addresses inside it, so an IPv6 client counts as the network of its first `ipv6Prefix` bits
 * (`2001:db8:1:2::/64`, zone id dropped: it names our interface, not the client). An
 * IPv4-mapped address (a dual-stack listener's view of an IPv4 peer) counts as that IPv4
 * address, so the same client has one budget whichever socket it reached. Anything that is not
 * an address is left as it is.
 */
export function toRateLimitAddress(address: string, ipv6Prefix: number): string {
  // The common case, a socket's IPv4 peer, is already as ipaddr.js would write it (parsing it
  // cost ~1.5% of a cache hit).
  if (CANONICAL_IPV4.test(address)) return address;
  if (!ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (!(ip instanceof ipaddr.IPv6)) return ip.toString();
  const mask = ipaddr.IPv6.subnetMaskFromPrefixLength(ipv6Prefix).parts;
  const network = new ipaddr.IPv6(ip.parts.map((part, i) => part & (mask[i] ?? 0)));
  return `${network.toRFC5952String()}/${ipv6Prefix}`;
}
