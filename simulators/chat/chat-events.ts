import { randomUUID } from 'node:crypto';
import { ChatApiError, badRequest } from './chat-errors.js';
import { folderJson } from './chat-folder-format.js';
import type { ChatUser } from './chat-model.js';
import type { ChatParams } from './chat-params.js';
import type { ChatRealm } from './chat-realm.js';

/*
 * Zulip's real-time events (zulip-openapi.yaml: POST /register, GET /events, DELETE /events):
 * queues per client, long-polls answered by an event or a heartbeat, queues garbage-collected
 * after `idle_queue_timeout` without a poll, and BAD_EVENT_QUEUE_ID for a queue that is gone.
 * Only what the extract keeps is simulated: heartbeats and channel_folder events.
 */

type ChatEvent = Record<string, unknown> & { id: number; type: string };

interface Queue {
  readonly id: string;
  readonly userId: number;
  /** Event types it asked for; undefined means every type. */
  readonly eventTypes: ReadonlySet<string> | undefined;
  readonly idleTimeoutMs: number;
  nextId: number;
  pending: ChatEvent[];
  /** When the last poll ended (or the queue was registered); a poll under way keeps it alive. */
  lastActive: number;
  polling: number;
  wake: (() => void) | undefined;
}

export interface EventQueueOptions {
  /** How long a long-poll waits before it is answered with a heartbeat (Zulip: about a minute). */
  heartbeatMs?: number;
  /** The default `idle_queue_timeout` (Zulip: 10 minutes). */
  idleTimeoutMs?: number;
  now?: () => number;
}

export interface EventQueues {
  register(user: ChatUser, params: ChatParams): Record<string, unknown>;
  /** GET /events: answers at once if events wait, else when one arrives or the heartbeat is due. */
  poll(user: ChatUser, params: ChatParams, closed: Promise<void>): Promise<Record<string, unknown>>;
  remove(user: ChatUser, params: ChatParams): Record<string, unknown>;
  /** Sends an event to every queue that asked for its type. */
  emit(event: Record<string, unknown> & { type: string }): void;
  /** A server restart: every queue is gone. */
  loseAll(): void;
  /** Queues alive now (after garbage collection). */
  count(): number;
  close(): void;
}

const ZULIP_VERSION = '13.0-dev';
const MERGE_BASE = '13.0-dev';

function badQueue(queueId: string): ChatApiError {
  return new ChatApiError(400, 'BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${queueId}`, {
    data: { queue_id: queueId },
  });
}

function jsonList(params: ChatParams, name: string): string[] | undefined {
  const raw = params.take(name);
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw badRequest(`${name} is not valid JSON`);
  }
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) {
    throw badRequest(`${name} is not a list`);
  }
  return parsed;
}

export function createEventQueues(realm: ChatRealm, options: EventQueueOptions = {}): EventQueues {
  const heartbeatMs = options.heartbeatMs ?? 55_000;
  const defaultIdleMs = options.idleTimeoutMs ?? 600_000;
  const now = options.now ?? Date.now;
  const queues = new Map<string, Queue>();

  function collect(): void {
    const t = now();
    for (const [id, queue] of queues) {
      if (queue.polling === 0 && t - queue.lastActive > queue.idleTimeoutMs) queues.delete(id);
    }
  }
  const sweep = setInterval(collect, 250);
  sweep.unref();

  function queueOf(user: ChatUser, params: ChatParams): Queue {
    const id = params.take('queue_id');
    if (id === undefined) throw badRequest("Missing 'queue_id' argument");
    collect();
    const queue = queues.get(id);
    // Another user's queue is as unknown to this one as a collected queue.
    if (!queue || queue.userId !== user.id) throw badQueue(id);
    return queue;
  }

  function push(queue: Queue, event: Record<string, unknown> & { type: string }): void {
    queue.pending.push({ ...event, id: queue.nextId++ });
    queue.wake?.();
  }

  return {
    register(user, params) {
      const eventTypes = jsonList(params, 'event_types');
      const fetchTypes = jsonList(params, 'fetch_event_types') ?? eventTypes;
      const idleRaw = params.take('idle_queue_timeout');
      const idleSeconds = idleRaw === undefined ? undefined : Number(idleRaw);
      if (idleSeconds !== undefined && (!Number.isInteger(idleSeconds) || idleSeconds < 1)) {
        throw badRequest('idle_queue_timeout is too small');
      }
      // Every other parameter of POST /register is accepted and has no effect here.
      for (const name of ['apply_markdown', 'client_gravatar', 'include_subscribers']) {
        params.take(name);
      }
      const queue: Queue = {
        id: randomUUID(),
        userId: user.id,
        eventTypes: eventTypes === undefined ? undefined : new Set(eventTypes),
        idleTimeoutMs: idleSeconds === undefined ? defaultIdleMs : idleSeconds * 1000,
        nextId: 0,
        pending: [],
        lastActive: now(),
        polling: 0,
        wake: undefined,
      };
      queues.set(queue.id, queue);
      const withOrder = realm.featureLevel >= 414;
      const snapshot =
        fetchTypes === undefined || fetchTypes.includes('channel_folders')
          ? {
              channel_folders: [...realm.channelFolders]
                .sort((a, b) => a.id - b.id)
                .map((folder) => folderJson(folder, withOrder)),
            }
          : {};
      return {
        queue_id: queue.id,
        idle_queue_timeout_secs: Math.round(queue.idleTimeoutMs / 1000),
        last_event_id: -1,
        zulip_feature_level: realm.featureLevel,
        zulip_version: ZULIP_VERSION,
        zulip_merge_base: MERGE_BASE,
        ...snapshot,
      };
    },

    async poll(user, params, closed) {
      const queue = queueOf(user, params);
      const lastRaw = params.take('last_event_id');
      const last = lastRaw === undefined ? -1 : Number(lastRaw);
      if (!Number.isInteger(last)) throw badRequest('last_event_id is not an integer');
      const dontBlock = params.takeJsonBool('dont_block', false);
      // Acknowledged events leave the queue.
      queue.pending = queue.pending.filter((event) => event.id > last);
      if (queue.pending.length === 0 && !dontBlock) {
        queue.polling += 1;
        let timer: NodeJS.Timeout | undefined;
        let gone = false;
        try {
          await Promise.race([
            new Promise<void>((resolve) => {
              queue.wake = resolve;
              timer = setTimeout(() => {
                push(queue, { type: 'heartbeat' });
                resolve();
              }, heartbeatMs);
            }),
            closed.then(() => {
              gone = true;
            }),
          ]);
        } finally {
          clearTimeout(timer);
          queue.wake = undefined;
          queue.polling -= 1;
          queue.lastActive = now();
        }
        if (gone) return {};
        // A queue lost while this poll waited (loseAll) answers as Zulip would next time.
        if (!queues.has(queue.id)) throw badQueue(queue.id);
      }
      queue.lastActive = now();
      return { events: queue.pending.map((event) => ({ ...event })), queue_id: queue.id };
    },

    remove(user, params) {
      const queue = queueOf(user, params);
      queues.delete(queue.id);
      queue.wake?.();
      return {};
    },

    emit(event) {
      collect();
      for (const queue of queues.values()) {
        if (queue.eventTypes === undefined || queue.eventTypes.has(event.type)) push(queue, event);
      }
    },

    loseAll() {
      const lost = [...queues.values()];
      queues.clear();
      for (const queue of lost) queue.wake?.();
    },

    count() {
      collect();
      return queues.size;
    },

    close() {
      clearInterval(sweep);
      this.loseAll();
    },
  };
}
