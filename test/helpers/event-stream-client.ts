import { EventEmitter } from 'node:events';
import { request, type IncomingHttpHeaders } from 'node:http';

/** One server-sent event as the WHATWG parser reads it (fields of one block). */
export interface ServerSentEvent {
  id?: string;
  event?: string;
  data?: string;
  retry?: number;
}

export interface EventStreamClient {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body, when the answer was not a stream (a problem). */
  readonly body: string;
  /** Every event so far, in order; comment-only blocks (heartbeats) are counted apart. */
  readonly events: ServerSentEvent[];
  readonly heartbeats: number;
  /** Every byte received, as text. */
  readonly raw: string;
  /** The first event from `from` on (default: any so far) that matches. */
  next(match?: (event: ServerSentEvent) => boolean, from?: number): Promise<ServerSentEvent>;
  /** Resolves when the server ends the stream (or the socket closes). */
  readonly ended: Promise<void>;
  close(): void;
}

/**
 * A minimal EventSource over node:http against a gateway's real listener: it keeps every event
 * and lets a test wait for the one it expects (an event, never a duration).
 */
export function openEventStream(
  url: string,
  headers: Record<string, string> = {},
): Promise<EventStreamClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      const arrived = new EventEmitter();
      const events: ServerSentEvent[] = [];
      let heartbeats = 0;
      let raw = '';
      let pending = '';
      let endedResolve: () => void = () => undefined;
      const ended = new Promise<void>((r) => (endedResolve = r));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        raw += chunk;
        pending += chunk;
        let at: number;
        while ((at = pending.indexOf('\n\n')) >= 0) {
          const block = pending.slice(0, at);
          pending = pending.slice(at + 2);
          const event: ServerSentEvent = {};
          let fields = 0;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            const name = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            fields += 1;
            if (name === 'data')
              event.data = event.data === undefined ? value : `${event.data}\n${value}`;
            else if (name === 'id') event.id = value;
            else if (name === 'event') event.event = value;
            else if (name === 'retry') event.retry = Number(value);
          }
          if (fields === 0) heartbeats += 1;
          else {
            events.push(event);
            arrived.emit('event');
          }
        }
      });
      res.on('close', () => {
        endedResolve();
        arrived.emit('event');
      });
      res.on('error', () => undefined);
      const client: EventStreamClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        get body() {
          return raw;
        },
        events,
        get heartbeats() {
          return heartbeats;
        },
        get raw() {
          return raw;
        },
        next(match = () => true, from = 0) {
          return new Promise((resolveEvent, rejectEvent) => {
            const check = () => {
              const found = events.slice(from).find(match);
              if (found) {
                arrived.off('event', check);
                resolveEvent(found);
              } else if (res.closed) {
                arrived.off('event', check);
                rejectEvent(new Error(`the stream ended without the event; got ${raw}`));
              }
            };
            arrived.on('event', check);
            check();
          });
        },
        ended,
        close: () => req.destroy(),
      };
      resolve(client);
    });
    req.on('error', reject);
    req.end();
  });
}
