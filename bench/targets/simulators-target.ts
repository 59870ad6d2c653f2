import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type * as Simulators from '../../simulators/start-simulators.js';
import { repoRoot } from '../../test/harness/chaos-processes.js';

// The simulators as built (`npm run bench` builds first), not through tsx: tsx's wrapper around
// every function the renderer creates cost a quarter of the simulators' CPU, and R4 must not be
// limited by the core the simulators share with the load generator.
const { startSimulators } = (await import(
  join(repoRoot(), 'dist/simulators/start-simulators.js')
)) as typeof Simulators;

/*
 * The simulated upstreams for `npm run bench`, in their own process (pinned away from the
 * server under test), with a control port that reports how many search calls arrived:
 * the stampede row counts upstream calls across a burst.
 * Usage: simulators-target <search token> <control port>
 */

const [token = 'bench-token', controlPort = '0'] = process.argv.slice(2);
const sims = await startSimulators({ clientToken: token });
const searches = () => sims.search.requests.filter((r) => r.pathname === '/v1/search').length;
const control = createServer((req, res) => {
  if (req.url === '/reset') sims.search.requests.length = 0;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ searches: searches() }));
});
// The simulator keeps every request it saw; the bench resets it between rows.
control.listen(Number(controlPort), '127.0.0.1', () => {
  const admin = sims.chat.credentials('administrator');
  process.send?.({
    event: 'listening',
    controlPort: (control.address() as AddressInfo).port,
    searchOrigin: sims.searchOrigin,
    chatOrigin: sims.chatOrigin,
    chatEmail: admin.email,
    chatApiKey: admin.apiKey,
  });
});
process.on('SIGTERM', () => void sims.close().then(() => process.exit(0)));
