import type { IncomingMessage } from 'node:http';
import { AppError } from '../../errors/app-error.js';
import {
  clientAddress,
  toRateLimitAddress,
  type TrustFunction,
} from '../../http/client-address.js';
import type { Caller } from '../chat/chat-credentials.js';
import type { EventHub } from './event-hub.js';
import type { StreamRefusal } from './stream-counts.js';

/** A refused page's own back-off then takes it elsewhere or later. */
const RETRY_AFTER_SECONDS = 5;

export interface StreamAdmissionOptions {
  hub: EventHub;
  /** EVENTS_MAX_STREAMS, as it may be (streams-allowed.ts). */
  maxStreams: number;
  /** EVENTS_MAX_STREAMS_PER_CLIENT. */
  maxPerClient: number;
  /**
   * The proxies trusted to say who the client is, as the rate limits use them; undefined when
   * TRUST_PROXY is off, so that in service mode every client would be the proxy's one address.
   */
  trust: TrustFunction | undefined;
  ipv6Prefix: number;
  isDraining(): boolean;
}

/**
 * Whether a new event stream may open (contract section 2.2 bounds, section 7 quotas per
 * caller), asked by both the events stage and the route, so the two cannot disagree: not while
 * the instance drains, not past EVENTS_MAX_STREAMS, and not past EVENTS_MAX_STREAMS_PER_CLIENT
 * for its caller, so one caller cannot hold every slot of the instance.
 */
export interface StreamAdmission {
  /** Why no stream may open now, before the caller is known (a look that costs nothing). */
  instanceRefusal(): StreamRefusal | undefined;
  /** Whom a stream of `caller` counts against; undefined when nobody can be told apart. */
  clientOf(req: IncomingMessage, caller: Caller): string | undefined;
  /** Why a stream of `client` may not open now, or undefined when it may. */
  refusal(client: string | undefined): StreamRefusal | undefined;
  /** The answer to a refused stream, counted in gateway_event_streams_refused_total. */
  refuse(refusal: StreamRefusal): AppError;
}

export function createStreamAdmission(options: StreamAdmissionOptions): StreamAdmission {
  const { hub, trust } = options;
  const instanceRefusal = (): StreamRefusal | undefined => {
    if (options.isDraining()) return 'draining';
    return hub.size >= options.maxStreams ? 'full' : undefined;
  };
  return {
    instanceRefusal,
    clientOf(req, caller) {
      // Session mode: the chat user, all of that user's sessions together.
      if (caller.userId !== undefined) return `user:${caller.userId}`;
      // Service mode: the address as the rate limits count it, only where a trusted proxy
      // says who the client is; behind an untrusted one every page would share one quota.
      if (trust === undefined) return undefined;
      return `address:${toRateLimitAddress(clientAddress(req, trust), options.ipv6Prefix)}`;
    },
    refusal(client) {
      const refusal = instanceRefusal();
      if (refusal !== undefined || client === undefined) return refusal;
      return hub.heldBy(client) >= options.maxPerClient ? 'per_client' : undefined;
    },
    refuse(refusal) {
      hub.refuse(refusal);
      if (refusal === 'per_client') {
        return new AppError(
          'TOO_MANY_STREAMS',
          `You hold ${options.maxPerClient} event streams on this instance, as many as one caller may; close one or reconnect later.`,
          { retryAfterSeconds: RETRY_AFTER_SECONDS },
        );
      }
      return new AppError(
        'SERVICE_UNAVAILABLE',
        refusal === 'draining'
          ? 'This instance is shutting down; reconnect shortly.'
          : 'This instance holds as many event streams as it may; reconnect shortly.',
        { retryAfterSeconds: RETRY_AFTER_SECONDS },
      );
    },
  };
}
