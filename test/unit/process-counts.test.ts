import fs, { readdirSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import { PROCESS_COUNT_METRICS } from '../../src/observability/process-counts.js';

/** `name{labels} value` lines of a Prometheus text body, by series. */
function samples(text: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    series.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return series;
}

const sumOf = (series: Map<string, number>, name: string) =>
  [...series].filter(([key]) => key.startsWith(`${name}{`)).reduce((sum, [, v]) => sum + v, 0);

describe('the process count metrics of /metrics', () => {
  let server: Server;
  let clients: Socket[];

  beforeEach(async () => {
    let accepted = 0;
    let allAccepted: () => void = () => undefined;
    const acceptedAll = new Promise<void>((resolve) => (allAccepted = resolve));
    server = createServer(() => {
      accepted += 1;
      if (accepted === 40) allAccepted();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    clients = await Promise.all(
      Array.from(
        { length: 40 },
        () =>
          new Promise<Socket>((resolve) => {
            const socket = connect(port, '127.0.0.1', () => resolve(socket));
          }),
      ),
    );
    await acceptedAll;
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    for (const socket of clients) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('when scraped, then each of the five is one series family under its prom-client name, and the descriptors are the open ones', async () => {
    const text = await createMetrics({ enabled: true }).render();
    for (const name of PROCESS_COUNT_METRICS) {
      expect(text.match(new RegExp(`^# TYPE ${name} gauge$`, 'gm')), name).toHaveLength(1);
    }
    const series = samples(text);
    // The 40 client sockets and their 40 accepted ends are among them.
    const open = readdirSync('/proc/self/fd').length - 1;
    expect(series.get('process_open_fds')).toBeGreaterThanOrEqual(80);
    expect(Math.abs(series.get('process_open_fds')! - open)).toBeLessThanOrEqual(4);
    expect(series.get('nodejs_active_handles{type="Socket"}')).toBeGreaterThanOrEqual(40);
    expect(series.get('nodejs_active_resources{type="TCPSocketWrap"}')).toBeGreaterThanOrEqual(40);
  });

  it('when scraped, then handles and resources are each listed once for both gauges of their pair, so the totals are the sums by type', async () => {
    const metrics = createMetrics({ enabled: true });
    const handles = vi.spyOn(
      process as unknown as { _getActiveHandles(): unknown[] },
      '_getActiveHandles',
    );
    const resources = vi.spyOn(process, 'getActiveResourcesInfo');
    const series = samples(await metrics.render());
    expect(handles).toHaveBeenCalledTimes(1);
    expect(resources).toHaveBeenCalledTimes(1);
    expect(series.get('nodejs_active_handles_total')).toBe(sumOf(series, 'nodejs_active_handles'));
    expect(series.get('nodejs_active_resources_total')).toBe(
      sumOf(series, 'nodejs_active_resources'),
    );
    // The next scrape lists them afresh, and sees the sockets closed meanwhile.
    const before = series.get('nodejs_active_handles{type="Socket"}')!;
    await Promise.all(
      clients
        .splice(0, 10)
        .map((socket) => new Promise((resolve) => socket.once('close', resolve).destroy())),
    );
    const after = samples(await metrics.render());
    expect(handles).toHaveBeenCalledTimes(2);
    expect(after.get('nodejs_active_handles{type="Socket"}')).toBeLessThan(before);
  });

  it('when scraped, then the descriptors are not listed on the event loop (no readdirSync of /proc/self/fd)', async () => {
    const metrics = createMetrics({ enabled: true });
    const listed = vi.spyOn(fs, 'readdirSync');
    const series = samples(await metrics.render());
    expect(listed.mock.calls.filter(([path]) => String(path) === '/proc/self/fd')).toEqual([]);
    expect(series.get('process_open_fds')).toBeGreaterThanOrEqual(80);
  });
});
