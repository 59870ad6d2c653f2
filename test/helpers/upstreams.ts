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

  async function gateway(options: GatewayOptions = {}): Promise<TestGateway> {
    const cache = options.cache ?? defaults.cache;
    const gw = await createTestGateway({
      searchOrigin: sims().search.origin,
      chatOrigin: sims().chat.origin,
      ...(cache === undefined ? {} : { cache }),
      env: { ...defaults.env, ...options.env },
    });
    gateways.push(gw);
    return gw;
  }

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
      const { email, apiKey } = sims().chat.credentials(kind);
      return gateway({
        env: { CHAT_AUTH_MODE: 'service', CHAT_EMAIL: email, CHAT_API_KEY: apiKey, ...env },
        ...(cache === undefined ? {} : { cache }),
      });
    },
    sessionGateway(env = {}) {
      return gateway({ env: { SESSION_COOKIE_SECURE: 'false', ...env } });
    },
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
