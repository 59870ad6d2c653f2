import { EventEmitter } from 'node:events';
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import { createLogThrottle } from '../../logging/log-throttle.js';
import type { RedisConnection } from '../../redis/redis-client.js';
import type { FolderVariant } from './stream-set.js';

const VARIANTS: readonly FolderVariant[] = ['archived', 'active'];

/**
 * Tells every instance of the fleet that a folder list may have changed (contract section 2.2:
 * a change seen by any instance reaches every stream on every instance). Messages carry no list,
 * only which one: each instance reads the list once from the shared cache and pushes it if its
 * bytes differ. Through Redis pub/sub when there is a Redis (a cluster forwards a PUBLISH to every
 * node), in process otherwise. A subscriber that was disconnected may have missed messages, so
 * each time it is ready again every list is re-read.
 */
export interface ChangeBus {
  publish(variant: FolderVariant): void;
  subscribe(handler: (variant: FolderVariant) => void): void;
  start(): Promise<void>;
  close(): void;
}

export function createLocalChangeBus(): ChangeBus {
  const events = new EventEmitter();
  return {
    publish: (variant) => void events.emit('changed', variant),
    subscribe: (handler) => void events.on('changed', handler),
    start: () => Promise.resolve(),
    close: () => void events.removeAllListeners(),
  };
}

export function createRedisChangeBus(options: {
  redis: RedisConnection;
  /** The deployment's key prefix: the channel is the deployment's own. */
  prefix: string;
  logger: Logger;
}): ChangeBus {
  const { redis } = options;
  const channel = `${options.prefix}events:channel_folders`;
  // A connection of its own: one in subscriber mode can run no other command.
  const subscriber: RedisConnection =
    redis instanceof Cluster ? redis.duplicate() : redis.duplicate();
  const handlers: ((variant: FolderVariant) => void)[] = [];
  const throttle = createLogThrottle(options.logger);
  const deliver = (variant: FolderVariant) => {
    for (const handler of handlers) handler(variant);
  };

  subscriber.on('message', (from: string, message: string) => {
    if (from === channel && (VARIANTS as readonly string[]).includes(message)) {
      deliver(message as FolderVariant);
    }
  });
  subscriber.on('error', () => undefined); // the main connection reports Redis trouble
  subscriber.on('ready', () => {
    subscriber.subscribe(channel).then(
      () => VARIANTS.forEach(deliver),
      (error: unknown) => throttle.warn('events-subscribe', { err: error }, 'event bus down'),
    );
  });

  return {
    publish(variant) {
      redis.publish(channel, variant).catch((error: unknown) => {
        throttle.warn('events-publish', { err: error }, 'folder change not published');
        // This instance's own streams still hear of it.
        deliver(variant);
      });
    },
    subscribe: (handler) => void handlers.push(handler),
    async start() {
      await subscriber.connect().catch(() => undefined);
    },
    close: () => subscriber.disconnect(),
  };
}
