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
  const { client, lease } = options;
  const log = options.logger.child({ component: 'chat-events' });
  const renewMs = options.leaseRenewMs ?? 2000;
  const progress: Progress = { state: 'off', applied: 0, registrations: 0, lastEventId: -1 };
  let stopping = false;
  let loop: Promise<void> | undefined;
  /** Aborts the poll under way: at stop, or when the lease is lost. */
  let aborter = new AbortController();
  const stopped = new AbortController();

  const call = (): ChatCall => ({ credentials: options.credentials, requestId: randomUUID() });
  const queue: QueueFollower = {
    client,
    folders: options.folders,
    call,
    log,
    longPollTimeoutMs: options.longPollTimeoutMs ?? 100_000,
    backoff: options.backoffMs ?? { min: 1000, max: 30_000 },
    random: options.random ?? Math.random,
    pause: (ms) => sleep(ms, undefined, { signal: stopped.signal }).catch(() => undefined),
  };

  async function deleteQueue(): Promise<void> {
    if (progress.queueId === undefined) return;
    const id = progress.queueId;
    progress.queueId = undefined;
    await client.deleteQueue(call(), id).catch((error: unknown) => {
      log.info({ err: error }, 'event queue not deleted; the chat server will collect it');
    });
  }

  /** Follows the queue while this instance holds the lease. */
  async function lead(): Promise<void> {
    aborter = new AbortController();
    const release = keepLease(lease, renewMs, () => {
      if (stopping) return;
      log.warn('chat events lease lost; standing by');
      aborter.abort();
    });
    try {
      await followQueue(queue, progress, aborter.signal, () => stopping);
    } finally {
      release();
    }
  }

  async function run(): Promise<void> {
    while (!stopping) {
      if (!(await lease.hold())) {
        progress.state = 'standby';
        await queue.pause(renewMs);
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
      progress.state = loop ? 'stopped' : 'off';
    },
    status: () => ({
      state: progress.state,
      applied: progress.applied,
      registrations: progress.registrations,
      lagSeconds:
        progress.lastAnswer === undefined ? undefined : (Date.now() - progress.lastAnswer) / 1000,
    }),
  };
}

/** Where the events stand: the status, and the queue this instance holds. */
interface Progress {
  state: ChatEventsState;
  applied: number;
  registrations: number;
  lastAnswer?: number;
  queueId?: string | undefined;
  /** The last event of the queue seen: polls ask for what comes after it. */
  lastEventId: number;
}

/** What following the queue takes. */
interface QueueFollower {
  client: ChatClient;
  folders: FolderCache;
  call(): ChatCall;
  log: Logger;
  longPollTimeoutMs: number;
  backoff: { min: number; max: number };
  random: () => number;
  /** Waits, or less when the events stop. */
  pause(ms: number): Promise<void>;
}

/** Renews the lease every `renewMs`; `lost` is told when a renewal fails. Returns the stop. */
function keepLease(lease: Lease, renewMs: number, lost: () => void): () => void {
  const timer = setInterval(() => {
    void lease.hold().then((held) => {
      if (!held) lost();
    });
  }, renewMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Registers a queue when none is held, then long-polls it until `signal` aborts or `stopping`
 * says so: a lost queue is registered anew, other errors back off.
 */
async function followQueue(
  queue: QueueFollower,
  progress: Progress,
  signal: AbortSignal,
  stopping: () => boolean,
): Promise<void> {
  let failures = 0;
  progress.lastEventId = -1;
  while (!stopping() && !signal.aborted) {
    try {
      if (progress.queueId === undefined) await register(queue, progress);
      await pollOnce(queue, progress, signal);
      failures = 0;
    } catch (error) {
      if (stopping() || signal.aborted) return;
      if (error instanceof EventQueueLost) {
        queue.log.info('chat event queue lost (BAD_EVENT_QUEUE_ID); registering a new one');
        progress.queueId = undefined;
        continue;
      }
      failures += 1;
      progress.state = 'backoff';
      const wait = backoffMs(failures, error, queue.backoff, queue.random);
      queue.log.warn({ err: error, waitMs: Math.round(wait) }, 'chat events failed; backing off');
      await queue.pause(wait);
    }
  }
}

/** Registers a queue; its folder snapshot replaces the cache. */
async function register(queue: QueueFollower, progress: Progress): Promise<void> {
  progress.state = 'registering';
  const registered = await queue.client.registerQueue(queue.call(), {
    eventTypes: EVENT_TYPES,
    fetchEventTypes: FETCH_EVENT_TYPES,
  });
  progress.registrations += 1;
  progress.queueId = registered.queue_id;
  progress.lastEventId = registered.last_event_id;
  progress.lastAnswer = Date.now();
  // The snapshot is the truth: it replaces whatever the cache held.
  if (registered.channel_folders) await queue.folders.replace(registered.channel_folders);
  queue.log.info({ queueId: 'registered' }, 'chat event queue registered');
}

/** One long poll; a folder event among its events refreshes the folders. */
async function pollOnce(
  queue: QueueFollower,
  progress: Progress,
  signal: AbortSignal,
): Promise<void> {
  progress.state = 'polling';
  const events = await queue.client.getEvents(
    queue.call(),
    { queueId: progress.queueId!, lastEventId: progress.lastEventId },
    { timeoutMs: queue.longPollTimeoutMs, signal },
  );
  progress.lastAnswer = Date.now();
  let foldersChanged = false;
  for (const event of events) {
    progress.lastEventId = Math.max(progress.lastEventId, event.id);
    progress.applied += 1;
    if (event.type === 'channel_folder') foldersChanged = true;
  }
  if (foldersChanged) await queue.folders.refresh(queue.call());
}

/** Doubling from `min` to `max` with jitter, never sooner than the error's Retry-After. */
function backoffMs(
  failures: number,
  error: unknown,
  backoff: { min: number; max: number },
  random: () => number,
): number {
  const base = Math.min(backoff.max, backoff.min * 2 ** (failures - 1));
  const retryAfter =
    isAppError(error) && error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : 0;
  return Math.max(retryAfter, base / 2 + random() * (base / 2));
}
