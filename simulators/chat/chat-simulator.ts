import { createSimServer, type SimServer } from '../sim-server.js';
import { toBasicAuth } from './chat-auth.js';
import { createChatControl, createControlHandler, type ChatControl } from './chat-control.js';
import { createEventQueues, type EventQueues } from './chat-events.js';
import { createChatHandler } from './chat-handler.js';
import type { ChatCredentials } from './chat-model.js';
import { createChatRealm, type ChatRealm, type CredentialKind } from './chat-realm.js';

/** The newest feature level the OpenAPI extract documents ("Zulip 13.0 (feature level 507)"). */
export const NEWEST_FEATURE_LEVEL = 507;

export const DEFAULT_REALM_HOST = 'chat.example.test';

export interface ChatSimulatorOptions {
  /** The server's feature level; decides which endpoints and fields exist. Default 507. */
  featureLevel?: number;
  /** The realm's host, used in dummy addresses `user{id}@{realmHost}` and bot addresses. */
  realmHost?: string;
  /** How long an event long-poll waits before its heartbeat (Zulip: about a minute). */
  heartbeatMs?: number;
  /** The default idle timeout of an event queue (Zulip: 10 minutes). */
  eventQueueIdleMs?: number;
  /** The clock event queues idle by; tests move it instead of waiting (default Date.now). */
  now?: () => number;
}

/** A simulated Zulip server: the shared SimServer plus the realm and helpers for tests. */
export interface ChatSimulator extends SimServer {
  readonly realm: ChatRealm;
  /** `{origin}/api/v1`; throws before listen(). */
  readonly apiBase: string;
  /** Credentials of the first seeded user of a kind (see CredentialKind). */
  credentials(kind: CredentialKind): ChatCredentials;
  /** A ready `Authorization: Basic …` header value for that user. */
  authHeader(kind: CredentialKind): string;
  setFeatureLevel(level: number): void;
  /**
   * Answers the next `times` requests with Zulip's 429 RATE_LIMIT_HIT, `Retry-After: seconds`
   * and `retry-after` in the body. Like Zulip, a request is limited only once it has
   * authenticated (a 401 leaves the limit pending); POST /fetch_api_key is limited before.
   */
  rateLimitNext(seconds: number, times?: number): void;
  /**
   * Changes folders (sending the matching events) and channels, and counts a user's requests
   * (also over HTTP below /__sim/).
   */
  readonly control: ChatControl;
  /** The event queues registered through POST /register. */
  readonly events: EventQueues;
}

function assertFeatureLevel(level: number): void {
  if (!Number.isInteger(level) || level < 0) {
    throw new Error(`featureLevel must be a non-negative integer, got ${level}`);
  }
}

function assertPositiveInteger(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`${name} must be a positive integer, got ${value}`);
  }
}

export function createChatSimulator(options: ChatSimulatorOptions = {}): ChatSimulator {
  const featureLevel = options.featureLevel ?? NEWEST_FEATURE_LEVEL;
  const realmHost = options.realmHost ?? DEFAULT_REALM_HOST;
  assertFeatureLevel(featureLevel);
  if (!/^[a-z0-9.-]+(:\d+)?$/i.test(realmHost)) {
    throw new Error(`realmHost must be a bare host name, got ${JSON.stringify(realmHost)}`);
  }

  const realm = createChatRealm({ host: realmHost, featureLevel });
  const pendingLimits: number[] = [];
  const events = createEventQueues(realm, {
    ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
    ...(options.eventQueueIdleMs === undefined ? {} : { idleTimeoutMs: options.eventQueueIdleMs }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  // The control counts requests the server below records; it reads them only when asked.
  const control = createChatControl(
    realm,
    events,
    () => Date.now(),
    () => sim.requests,
  );
  const sim = createSimServer(
    createChatHandler({
      realm,
      rateLimits: { take: () => pendingLimits.shift() },
      now: () => Date.now(),
      events,
      control: createControlHandler(control),
    }),
  );

  return {
    server: sim.server,
    requests: sim.requests,
    faults: sim.faults,
    received: (match) => sim.received(match),
    listen: (port, host) => sim.listen(port, host),
    get origin() {
      return sim.origin;
    },
    get apiBase() {
      return `${sim.origin}/api/v1`;
    },
    close: () => {
      events.close();
      return sim.close();
    },
    realm,
    control,
    events,
    credentials: (kind) => realm.credentials(kind),
    authHeader(kind) {
      const { email, apiKey } = realm.credentials(kind);
      return toBasicAuth(email, apiKey);
    },
    setFeatureLevel(level) {
      assertFeatureLevel(level);
      realm.featureLevel = level;
    },
    rateLimitNext(seconds, times = 1) {
      assertPositiveInteger('seconds', seconds);
      assertPositiveInteger('times', times);
      for (let i = 0; i < times; i += 1) pendingLimits.push(seconds);
    },
  };
}

export { toBasicAuth } from './chat-auth.js';
export type { ChatRealm, CredentialKind } from './chat-realm.js';
export type { ChatChannel, ChatCredentials, ChatUser } from './chat-model.js';
export type { ChannelChange, NewChannel } from './chat-channel-control.js';
