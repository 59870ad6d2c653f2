import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { isAppError } from '../../errors/app-error.js';
import type { ChatEventsState, ChatEventsStatus } from '../../observability/chat-events-status.js';
import type { Lease } from '../../state/lease.js';
import type { ChatCall, ChatClient } from '../../upstreams/chat/chat-client.js';
import { EventQueueLost } from '../../upstreams/chat/chat-errors.js';
import type { ChannelFolder } from '../../upstreams/chat/chat-schemas.js';

export interface ChatEvents {
  /** Starts the loop in the background; it ends with stop(). */
  start(): void;
  /** Ends the poll, deletes the queue on the chat server and releases the lease. */
  stop(): Promise<void>;
  status(): ChatEventsStatus;
}

/** What the events change: the cached folder lists (chat-service.ts). */
export interface FolderCache {
  /** A snapshot of every folder (archived ones included) replaces both cached lists. */
  replace(folders: readonly ChannelFolder[]): Promise<void>;
  /** Fetches the folders again and replaces both cached lists. */
  refresh(call: ChatCall): Promise<void>;
}

export interface ChatEventsOptions {
  client: ChatClient;
  /** The service account's credentials: the queue is the deployment's, not a user's. */
  credentials: ChatCall['credentials'];
  folders: FolderCache;
  /** One queue per deployment: held through Redis, or by the one instance without it. */
  lease: Lease;
  logger: Logger;
  /**
   * The long-poll's own client timeout: above Zulip's event_queue_longpoll_timeout_seconds
   * (90 s by default), so the server's heartbeat always ends a quiet poll first.
   */
  longPollTimeoutMs?: number;
  /** How often the lease is renewed, and a standby instance tries to take it. */
  leaseRenewMs?: number;
  /** Back-off after an error: from `min` doubling to `max`, with jitter. */
  backoffMs?: { min: number; max: number };
  random?: () => number;
}

const EVENT_TYPES = ['channel_folder'];
/** Zulip's two names differ: the event type is singular, the snapshot plural. */
const FETCH_EVENT_TYPES = ['channel_folders'];

/**
 * Keeps the cached channel folders fresh from the chat server's event queue (contract section
 * 6, Chat events). One instance of the deployment holds the lease and, with the service
 * account, registers a queue (its folder snapshot replaces the cache), then long-polls it from
 * `last_event_id`; each channel_folder event (add, update, reorder) refreshes both folder lists
 * in the shared cache, where every instance reads them. A lost queue is registered anew; other
 * errors back off with jitter, honouring Retry-After. Polling keeps the queue alive; the
 * server's heartbeats end quiet polls. While no instance holds the lease, folders live by TTL.
 */
export function createChatEvents(options: ChatEventsOptions): ChatEvents {
  const { client, folders, lease, logger } = options;
  const log = logger.child({ component: 'chat-events' });
  const longPollTimeoutMs = options.longPollTimeoutMs ?? 100_000;
  const renewMs = options.leaseRenewMs ?? 2000;
  const backoff = options.backoffMs ?? { min: 1000, max: 30_000 };
  const random = options.random ?? Math.random;

  let state: ChatEventsState = 'off';
  let applied = 0;
  let registrations = 0;
  let lastAnswer: number | undefined;
  let queueId: string | undefined;
  let stopping = false;
  let loop: Promise<void> | undefined;
  /** Aborts the poll under way: at stop, or when the lease is lost. */
  let aborter = new AbortController();
  const stopped = new AbortController();

  const call = (): ChatCall => ({ credentials: options.credentials, requestId: randomUUID() });
  const pause = (ms: number) =>
    sleep(ms, undefined, { signal: stopped.signal }).catch(() => undefined);

  /** Renews the lease while this instance polls; a renewal that fails ends the poll. */
  function keepLease(): () => void {
    const timer = setInterval(() => {
      void lease.hold().then((held) => {
        if (!held && !stopping) {
          log.warn('chat events lease lost; standing by');
          aborter.abort();
        }
      });
    }, renewMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  async function deleteQueue(): Promise<void> {
    if (queueId === undefined) return;
    const id = queueId;
    queueId = undefined;
    await client.deleteQueue(call(), id).catch((error: unknown) => {
      log.info({ err: error }, 'event queue not deleted; the chat server will collect it');
    });
  }

  async function lead(): Promise<void> {
    aborter = new AbortController();
    const release = keepLease();
    let failures = 0;
    let lastEventId = -1;
    try {
      while (!stopping && !aborter.signal.aborted) {
        try {
          if (queueId === undefined) {
            state = 'registering';
            const registered = await client.registerQueue(call(), {
              eventTypes: EVENT_TYPES,
              fetchEventTypes: FETCH_EVENT_TYPES,
            });
            registrations += 1;
            queueId = registered.queue_id;
            lastEventId = registered.last_event_id;
            lastAnswer = Date.now();
            // The snapshot is the truth: it replaces whatever the cache held.
            if (registered.channel_folders) await folders.replace(registered.channel_folders);
            log.info({ queueId: 'registered' }, 'chat event queue registered');
          }
          state = 'polling';
          const events = await client.getEvents(
            call(),
            { queueId, lastEventId },
            { timeoutMs: longPollTimeoutMs, signal: aborter.signal },
          );
          lastAnswer = Date.now();
          failures = 0;
          let foldersChanged = false;
          for (const event of events) {
            lastEventId = Math.max(lastEventId, event.id);
            applied += 1;
            if (event.type === 'channel_folder') foldersChanged = true;
          }
          if (foldersChanged) await folders.refresh(call());
        } catch (error) {
          if (stopping || aborter.signal.aborted) return;
          if (error instanceof EventQueueLost) {
            log.info('chat event queue lost (BAD_EVENT_QUEUE_ID); registering a new one');
            queueId = undefined;
            continue;
          }
          failures += 1;
          state = 'backoff';
          const base = Math.min(backoff.max, backoff.min * 2 ** (failures - 1));
          const retryAfter =
            isAppError(error) && error.retryAfterSeconds !== undefined
              ? error.retryAfterSeconds * 1000
              : 0;
          const wait = Math.max(retryAfter, base / 2 + random() * (base / 2));
          log.warn({ err: error, waitMs: Math.round(wait) }, 'chat events failed; backing off');
          await pause(wait);
        }
      }
    } finally {
      release();
    }
  }

  async function run(): Promise<void> {
    while (!stopping) {
      if (!(await lease.hold())) {
        state = 'standby';
        await pause(renewMs);
        continue;
      }
      await lead();
      // Lost the lease (or stopping): the queue is another instance's business now.
      await deleteQueue();
    }
  }

  return {
    start() {
      if (loop) return;
      loop = run().catch((error: unknown) => {
        log.error({ err: error }, 'chat events stopped unexpectedly');
      });
    },
    async stop() {
      stopping = true;
      stopped.abort();
      aborter.abort();
      await loop;
      await deleteQueue();
      await lease.release();
      state = loop ? 'stopped' : 'off';
    },
    status: () => ({
      state,
      applied,
      registrations,
      lagSeconds: lastAnswer === undefined ? undefined : (Date.now() - lastAnswer) / 1000,
    }),
  };
}
