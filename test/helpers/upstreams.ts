import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import {
  createChatSimulator,
  type ChatSimulator,
  type CredentialKind,
} from '../../simulators/chat/chat-simulator.js';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import type { RecordedRequest } from '../../simulators/sim-server.js';
import {
  BROWSER_HEADERS,
  SEARCH_TOKEN,
  createTestGateway,
  type TestGatewayOptions,
  type TestGateway,
} from './test-gateway.js';

export interface GatewayOptions {
  cache?: TestGatewayOptions['cache'];
  env?: Record<string, string>;
  /** The gateway's clock (test/helpers/test-clock.ts), for tests that move time. */
  now?: TestGatewayOptions['now'];
}

export interface Upstreams {
  readonly chat: ChatSimulator;
  readonly search: SearchSimulator;
  /** Every request either simulator received since the test began. */
  calls(): RecordedRequest[];
  /** A gateway on both simulators (session mode unless env says otherwise), closed after the test. */
  gateway(options?: GatewayOptions): Promise<TestGateway>;
  /** A gateway in service mode acting as that chat user. */
  serviceGateway(
    kind?: CredentialKind,
    env?: Record<string, string>,
    cache?: GatewayOptions['cache'],
  ): Promise<TestGateway>;
  /** A gateway in session mode with the plain-HTTP cookie name `bff_session`. */
  sessionGateway(env?: Record<string, string>): Promise<TestGateway>;
  /**
   * A gateway kept for the whole file (closed after it), made on its first use; the same
   * options give the same gateway. Only for tests that leave nothing behind in it (requests
   * refused before any cache, limit or session is touched): one gateway instead of one per test.
   */
  fileGateway(options?: GatewayOptions): Promise<TestGateway>;
  /** The env of service mode acting as that chat user (what serviceGateway sets). */
  serviceEnv(kind?: CredentialKind): Record<string, string>;
  /** The env of session mode with the plain-HTTP cookie (what sessionGateway sets). */
  readonly sessionEnv: Record<string, string>;
  /** Logs in through the gateway; returns the `Cookie` header value. */
  login(gw: TestGateway, kind: CredentialKind): Promise<string>;
}

/**
 * Both simulators for the file (closed after it), fresh request logs and faults per test, and
 * every gateway a test made closed after it. Call once at the top of a test file.
 */
export function useUpstreams(defaults: GatewayOptions = {}): Upstreams {
  let chat: ChatSimulator | undefined;
  let search: SearchSimulator | undefined;
  const gateways: TestGateway[] = [];
  const fileGateways = new Map<string, Promise<TestGateway>>();
  const sims = () => {
    if (!chat || !search) throw new Error('simulators are not listening yet');
    return { chat, search };
  };

  beforeAll(async () => {
    chat = createChatSimulator();
    search = createSearchSimulator({ clientToken: SEARCH_TOKEN });
    await Promise.all([chat.listen(), search.listen()]);
  });
  afterAll(async () => {
    const kept = [...fileGateways.values()];
    fileGateways.clear();
    await Promise.all(kept.map(async (gw) => (await gw).close()));
    await Promise.all([chat?.close(), search?.close()]);
  });
  beforeEach(() => {
    for (const sim of Object.values(sims())) {
      sim.requests.length = 0;
      sim.faults.clear();
    }
    sims().chat.setFeatureLevel(506);
  });
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((gw) => gw.close()));
  });

  function build(options: GatewayOptions): Promise<TestGateway> {
    const cache = options.cache ?? defaults.cache;
    return createTestGateway({
      searchOrigin: sims().search.origin,
      chatOrigin: sims().chat.origin,
      ...(cache === undefined ? {} : { cache }),
      env: { ...defaults.env, ...options.env },
      ...(options.now ? { now: options.now } : {}),
    });
  }

  async function gateway(options: GatewayOptions = {}): Promise<TestGateway> {
    const gw = await build(options);
    gateways.push(gw);
    return gw;
  }

  function serviceEnv(kind: CredentialKind = 'administrator'): Record<string, string> {
    const { email, apiKey } = sims().chat.credentials(kind);
    return { CHAT_AUTH_MODE: 'service', CHAT_EMAIL: email, CHAT_API_KEY: apiKey };
  }
  const sessionEnv = { SESSION_COOKIE_SECURE: 'false' };

  return {
    get chat() {
      return sims().chat;
    },
    get search() {
      return sims().search;
    },
    calls: () => [...sims().chat.requests, ...sims().search.requests],
    gateway,
    serviceGateway(kind = 'administrator', env = {}, cache) {
      return gateway({
        env: { ...serviceEnv(kind), ...env },
        ...(cache === undefined ? {} : { cache }),
      });
    },
    sessionGateway(env = {}) {
      return gateway({ env: { ...sessionEnv, ...env } });
    },
    fileGateway(options = {}) {
      if (options.now) throw new Error('a gateway shared by a file cannot have a test clock');
      const key = JSON.stringify([options.cache, options.env]);
      let kept = fileGateways.get(key);
      if (!kept) {
        kept = build(options);
        fileGateways.set(key, kept);
      }
      return kept;
    },
    serviceEnv,
    sessionEnv,
    async login(gw, kind) {
      const { email, password } = sims().chat.credentials(kind);
      if (password === null) throw new Error(`${kind} has no password to log in with`);
      const res = await request(gw.app)
        .post('/api/auth/login')
        .set(BROWSER_HEADERS)
        .send({ email, password });
      expect(res.status, res.text).toBe(200);
      const cookies = res.headers['set-cookie'] as unknown as string[];
      return cookies[0]!.split(';')[0]!;
    },
  };
}
