import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { HEAP_PER_STREAM, STREAM_HEAP_SHARE } from '../src/features/events/streams-allowed.js';
import { freePort } from '../test/harness/chaos-processes.js';
import { startProcess, type BenchProcess } from './bench-process.js';
import { GATEWAY_ENTRY, GATEWAY_NODE_OPTIONS, gatewayEnv, type Upstreams } from './gateway-env.js';
import { epochMs } from './stream-load.js';

/*
 * A gateway instance for `npm run bench:events`, and what the bench reads from it: its
 * `/metrics` (open streams, whether it holds the chat-events lease) and the folder to rename.
 */

export interface EventsGateway {
  label: string;
  process: BenchProcess;
  origin: string;
  port: number;
}

export interface EventsGatewayOptions {
  label: string;
  upstreams: Upstreams;
  core: number;
  /** The descriptor limit it is started under (`ulimit -n`). */
  openFiles: number;
  redisUrl: string;
  keyPrefix: string;
  maxStreams: number;
  maxConnections: number;
  env?: Record<string, string>;
}

/**
 * The node options a gateway holding `maxStreams` runs with: BENCH_GATEWAY_NODE_OPTIONS when
 * set, else the production ones with the heap cap raised as operations.md tells an operator to,
 * so that the streams fit in the share of the heap they may take (streams-allowed.ts; under the
 * production cap the gateway would lower EVENTS_MAX_STREAMS to about 7,500).
 */
export function eventsNodeOptions(maxStreams: number): string[] {
  if (process.env['BENCH_GATEWAY_NODE_OPTIONS'] !== undefined) return GATEWAY_NODE_OPTIONS;
  const heapMb = (maxStreams * HEAP_PER_STREAM) / STREAM_HEAP_SHARE / 2 ** 20;
  const capMb = Math.ceil(heapMb / 128) * 128;
  return GATEWAY_NODE_OPTIONS.map((option) =>
    option.startsWith('--max-old-space-size=') ? `--max-old-space-size=${capMb}` : option,
  );
}

export async function startEventsGateway(options: EventsGatewayOptions): Promise<EventsGateway> {
  const port = await freePort();
  const process = await startProcess([...eventsNodeOptions(options.maxStreams), GATEWAY_ENTRY], {
    env: gatewayEnv(port, options.upstreams, {
      REDIS_URL: options.redisUrl,
      REDIS_KEY_PREFIX: options.keyPrefix,
      EVENTS_MAX_STREAMS: String(options.maxStreams),
      MAX_CONNECTIONS: String(options.maxConnections),
      ...options.env,
    }),
    core: options.core,
    openFiles: options.openFiles,
    label: options.label,
  });
  return { label: options.label, process, origin: `http://127.0.0.1:${port}`, port };
}

export interface EventsMetrics {
  /** gateway_event_streams: streams open on the instance. */
  streams: number;
  /** gateway_chat_events_queue_state: the state at 1 (`polling` holds the lease). */
  chatEvents: string | undefined;
  /** nodejs_heap_size_used_bytes, in MB: live objects and garbage not yet collected. */
  heapUsedMb: number;
}

export async function eventsMetrics(gateway: EventsGateway): Promise<EventsMetrics> {
  const text = await (await fetch(`${gateway.origin}/metrics`)).text();
  const streams = /^gateway_event_streams (\S+)$/m.exec(text)?.[1];
  const state = /^gateway_chat_events_queue_state\{state="(\w+)"\} 1$/m.exec(text)?.[1];
  const heap = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1];
  return {
    streams: Number(streams ?? Number.NaN),
    chatEvents: state,
    heapUsedMb: Number(heap ?? Number.NaN) / 2 ** 20,
  };
}

/** Polls `check` every 100 ms until it holds; throws, naming `what`, after `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** A folder the gateway lists without archived ones: renaming it changes the streams' list. */
export async function activeFolder(gateway: EventsGateway): Promise<{ id: number; name: string }> {
  const res = await fetch(`${gateway.origin}/api/chat/channel-folders`);
  const body = (await res.json()) as {
    channel_folders?: { id: number; name: string; is_archived: boolean }[];
  };
  const folder = body.channel_folders?.find((f) => !f.is_archived);
  if (!res.ok || folder === undefined) {
    throw new Error(`no active channel folder from ${gateway.label}: ${res.status}`);
  }
  return folder;
}

/** Renames folder `id` on the chat simulator (its /__sim/ control), as an administrator would. */
export async function renameFolder(upstreams: Upstreams, id: number, name: string): Promise<void> {
  const res = await fetch(`${upstreams.chatOrigin}/__sim/channel-folders/${id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (!res.ok) throw new Error(`rename of folder ${id}: ${res.status} ${await res.text()}`);
}

/**
 * Watches the deployment's change bus (change-bus.ts: `<prefix>events:channel_folders` over
 * Redis pub/sub) from outside: when a change was published, the point between the chat side
 * of a delivery (event, refetch, cache write) and the fan-out (read once, write to each stream).
 */
export interface BusWatch {
  /** Epoch ms of the first message naming `variant` at or after `since`. */
  firstAfter(since: number, variant: string): number | undefined;
  close(): void;
}

export async function watchChangeBus(redisUrl: string, prefix: string): Promise<BusWatch> {
  const subscriber = new Redis(redisUrl);
  const seen: { at: number; variant: string }[] = [];
  subscriber.on('pmessage', (_pattern: string, channel: string, message: string) => {
    if (channel.endsWith('events:channel_folders')) seen.push({ at: epochMs(), variant: message });
  });
  await subscriber.psubscribe(`${prefix}*`);
  return {
    firstAfter: (since, variant) => seen.find((m) => m.at >= since && m.variant === variant)?.at,
    close: () => subscriber.disconnect(),
  };
}

/** Deletes every key under `prefix` (the gateways' shared state of one run). */
export async function deleteKeys(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl);
  let deleted = 0;
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 })) {
      const batch = keys as string[];
      if (batch.length > 0) deleted += await redis.del(...batch);
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}
