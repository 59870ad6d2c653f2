import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import {
  createSimServer,
  sendJson,
  sendJsonText,
  type RecordedRequest,
  type SimServer,
} from '../sim-server.js';
import { createSearchCatalogue, type SearchCatalogue } from './search-catalogue.js';
import { renderResultListJson } from './search-render.js';

/**
 * A product search service as described by search-service-api.md: search, redirect and
 * status under /v1. It follows the document, not any particular client.
 */
export interface SearchSimulatorOptions {
  /** Value expected in the Service-Client-Token header of search and status (section 5). */
  clientToken: string;
  seed?: number;
  productCount?: number;
  /** Origin that result links and `next` point at; the listening origin when absent. */
  publicOrigin?: string;
  /** The image host every image URL points at (search document 2.3). */
  imageHost?: string;
  /** A fixed `queryDuration` for recordings compared byte for byte; measured when absent. */
  queryDurationMs?: number;
}

/** One call of the redirect endpoint, as the service would record the traffic. */
export interface SearchClick {
  pid: string | undefined;
  sid: string | undefined;
  kind: string | undefined;
  /** Position the client reported; clients may rewrite it when they reorder (section 4.2). */
  rp: number | undefined;
  /** The external target it redirected to. */
  u: string;
  /** Every query parameter as received. */
  params: Record<string, string>;
}

export interface SearchSimulator extends SimServer {
  readonly catalogue: SearchCatalogue;
  readonly clicks: SearchClick[];
}

export const CLIENT_TOKEN_HEADER = 'service-client-token';
export const DEFAULT_K = 10;
/** The document gives no upper bound for k; larger values are capped, not refused. */
export const MAX_K = 1000;

type Route = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams) => void;

export function createSearchSimulator(options: SearchSimulatorOptions): SearchSimulator {
  const { clientToken, publicOrigin, queryDurationMs, ...catalogueOptions } = options;
  if (typeof clientToken !== 'string' || clientToken.length === 0) {
    throw new TypeError('clientToken must be a non-empty string');
  }
  const fixedOrigin = publicOrigin === undefined ? undefined : new URL(publicOrigin).origin;
  const catalogue = createSearchCatalogue(catalogueOptions);
  const clicks: SearchClick[] = [];
  const authorized = (req: IncomingMessage): boolean =>
    req.headers[CLIENT_TOKEN_HEADER] === clientToken;

  const routes: Record<string, Route> = {
    '/v1/search': (req, res, query) => {
      if (!authorized(req)) return sendError(res, 401, 'missing or invalid client token');
      const started = performance.now();
      const q = query.get('q');
      if (q === null || q.trim() === '') return sendError(res, 400, 'q is required');
      const k = parseCount(query.get('k'), DEFAULT_K, 1);
      if (k === undefined) return sendError(res, 400, 'k must be an integer of at least 1');
      const start = parseCount(query.get('start'), 0, 0);
      if (start === undefined) return sendError(res, 400, 'start must be an integer of at least 0');
      const size = Math.min(k, MAX_K);

      const origin = fixedOrigin ?? simulator.origin;
      const ranked = catalogue.search(q);
      const more = start + size < ranked.length;
      // The document leaves the next-page request open; ours repeats q and k and adds start.
      const next = more
        ? `${origin}/v1/search?${new URLSearchParams({ q, k: String(k), start: String(start + size) }).toString()}`
        : undefined;
      const ld = acceptsLinkedData(req.headers.accept);
      const body = renderResultListJson(
        ranked.slice(start, start + size),
        start,
        next,
        { origin, ld, sid: sessionToken(q) },
        () => queryDurationMs ?? Math.round(performance.now() - started),
      );
      sendJsonText(res, 200, body, ld ? 'application/ld+json' : 'application/json');
    },
    '/v1/url': (_req, res, query) => {
      const target = query.get('u');
      if (target === null || !isHttpUrl(target)) {
        return sendError(res, 400, 'u must be an absolute http or https URL');
      }
      const rp = query.get('rp');
      clicks.push({
        pid: query.get('pid') ?? undefined,
        sid: query.get('sid') ?? undefined,
        kind: query.get('kind') ?? undefined,
        rp: rp !== null && /^\d+$/.test(rp) ? Number(rp) : undefined,
        u: target,
        params: Object.fromEntries(query),
      });
      // Header values must be ASCII; a target with other characters goes out percent-encoded.
      const location = /^[\x21-\x7e]+$/.test(target) ? target : new URL(target).href;
      res.writeHead(302, { location, connection: 'close', 'content-length': 0 });
      res.end();
    },
    '/v1/status': (req, res) => {
      if (!authorized(req)) return sendError(res, 401, 'missing or invalid client token');
      res.writeHead(204);
      res.end();
    },
  };

  const simulator = createSimServer((req, res, recorded: RecordedRequest) => {
    const route = routes[recorded.pathname];
    if (route === undefined) return sendError(res, 404, 'not found');
    if (recorded.method !== 'GET') {
      res.setHeader('allow', 'GET');
      return sendError(res, 405, 'method not allowed');
    }
    // URLSearchParams decodes `+` as a space, as the document's q encoding requires (4.1).
    route(req, res, new URLSearchParams(recorded.url.slice(recorded.pathname.length)));
  });
  return Object.assign(simulator, { catalogue, clicks });
}

function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: message });
}

/** Absent → fallback; present → digits only and at least `min`, else undefined (a 400). */
function parseCount(raw: string | null, fallback: number, min: number): number | undefined {
  if (raw === null) return fallback;
  if (!/^\d{1,15}$/.test(raw)) return undefined;
  const value = Number(raw);
  return value >= min ? value : undefined;
}

/** Explicit `Accept: application/ld+json` (not refused with q=0) selects LD-JSON (4.1). */
function acceptsLinkedData(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    if (type !== 'application/ld+json') return false;
    const quality = params.find((param) => param.startsWith('q='));
    return quality === undefined || Number(quality.slice(2)) > 0;
  });
}

/** Same query, same session token: traffic of one search can be joined up. */
function sessionToken(q: string): string {
  return createHash('sha256').update(q).digest('hex').slice(0, 16);
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}
