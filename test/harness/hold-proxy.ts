import { EventEmitter } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP proxy that puts a race's timing in the test's hands (issue 17: "races need control over
 * timing, not luck"). Everything passes through untouched until `hold()`: from then on the
 * target's replies are kept back, on every connection, until `release()`. What clients send is
 * recorded, so a test waits on the event it needs ("the session GET has been sent") instead of
 * sleeping. Works for any protocol over TCP: Redis (RESP) and HTTP upstreams alike.
 */
export interface HoldProxy {
  readonly host: string;
  readonly port: number;
  /** Keep the target's replies back from now on. */
  hold(): void;
  /**
   * Start holding the moment a client sends bytes matching `pattern` (before they reach the
   * target, so that command's reply is the first one kept back).
   */
  holdWhen(pattern: RegExp): void;
  readonly holding: boolean;
  /** Deliver every reply kept back, in order, and pass replies through again. */
  release(): void;
  /** How often `pattern` occurs in what clients sent, counted per connection. */
  count(pattern: RegExp): number;
  /**
   * Resolves once `check` holds. It is tried now, whenever bytes pass either way, and on
   * `poke()` (for a condition that depends on something else, such as answers a test received).
   */
  until(check: () => boolean): Promise<void>;
  poke(): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  target: Socket;
  /** What the client sent on this connection, as latin1 text (RESP and HTTP heads are ASCII). */
  sent: string;
  /** Where in `sent` the armed trigger starts looking. */
  armedAt: number;
  held: Buffer[];
}

export async function startHoldProxy(target: { host: string; port: number }): Promise<HoldProxy> {
  const pairs = new Set<Pair>();
  /** Every connection ever made, closed ones included, for counting what was sent. */
  const all: Pair[] = [];
  const events = new EventEmitter();
  events.setMaxListeners(0);
  let holding = false;
  let trigger: RegExp | undefined;

  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const pair: Pair = { client, target: upstream, sent: '', armedAt: 0, held: [] };
    pairs.add(pair);
    all.push(pair);
    client.on('data', (chunk: Buffer) => {
      pair.sent += chunk.toString('latin1');
      if (trigger?.test(pair.sent.slice(pair.armedAt))) {
        trigger = undefined;
        holding = true;
      }
      upstream.write(chunk);
      events.emit('bytes');
    });
    upstream.on('data', (chunk: Buffer) => {
      if (holding) pair.held.push(chunk);
      else client.write(chunk);
      events.emit('bytes');
    });
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    host: '127.0.0.1',
    port,
    hold() {
      holding = true;
    },
    holdWhen(pattern) {
      for (const pair of pairs) pair.armedAt = pair.sent.length;
      trigger = pattern;
    },
    get holding() {
      return holding;
    },
    release() {
      holding = false;
      for (const pair of pairs) {
        for (const chunk of pair.held.splice(0)) pair.client.write(chunk);
      }
    },
    count(pattern) {
      const global = new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`);
      let n = 0;
      for (const pair of all) n += pair.sent.match(global)?.length ?? 0;
      return n;
    },
    until(check) {
      return new Promise((resolve) => {
        const test = () => {
          if (!check()) return;
          events.off('bytes', test).off('poke', test);
          resolve();
        };
        events.on('bytes', test).on('poke', test);
        test();
      });
    },
    poke() {
      events.emit('poke');
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.target.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
