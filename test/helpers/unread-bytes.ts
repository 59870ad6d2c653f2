import { existsSync, readFileSync } from 'node:fs';
import type { Socket } from 'node:net';

/** Linux's tables of TCP sockets: one line per socket, `tx_queue:rx_queue` in the fifth column. */
const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'];

/** The port of a `/proc/net/tcp` address (`0100007F:1A2B`; the port is big-endian hex). */
const portOf = (address: string): number => Number.parseInt(address.split(':').at(-1)!, 16);

/**
 * Bytes that have reached `socket` and that this process has not read yet, as the kernel counts
 * them (the rx_queue column of /proc/net/tcp). It answers without the event loop turning, so a
 * test that keeps its process busy can wait for the event "the reply is here, unread" instead
 * of guessing how long the other side takes to answer.
 */
export function unreadBytes(socket: Socket): number {
  const { localPort, remotePort } = socket;
  if (localPort === undefined || remotePort === undefined)
    throw new Error('unreadBytes: the socket is not connected');
  for (const table of TABLES.filter((path) => existsSync(path))) {
    for (const line of readFileSync(table, 'latin1').split('\n').slice(1)) {
      const [, local, remote, , queues] = line.trim().split(/\s+/);
      if (local === undefined || remote === undefined || queues === undefined) continue;
      if (portOf(local) === localPort && portOf(remote) === remotePort)
        return Number.parseInt(queues.split(':')[1]!, 16);
    }
  }
  throw new Error(
    `unreadBytes: no TCP socket ${localPort} → ${remotePort} in ${TABLES.join(', ')}`,
  );
}
