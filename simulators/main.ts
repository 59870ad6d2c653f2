import { startSimulators } from './start-simulators.js';

/**
 * The simulated upstreams on their own, for the container stack's `simulators` service:
 * `SIM_HOST` (default 127.0.0.1), `SIM_SEARCH_PORT` (4001), `SIM_CHAT_PORT` (4002),
 * `SIM_IMAGE_PORT` (4003), `SIM_SEARCH_CLIENT_TOKEN` (the token the search service expects),
 * `SIM_SEARCH_PUBLIC_ORIGIN` (where its result links point) and `SIM_IMAGE_PUBLIC_ORIGIN`
 * (where image URLs point: the address a browser uses to reach the image host).
 */
const env = process.env;
const port = (value: string | undefined, fallback: number) =>
  value === undefined || value === '' ? fallback : Number(value);

let stop: () => void = () => process.exit(0);
process.once('SIGTERM', () => stop());
process.once('SIGINT', () => stop());
const sims = await startSimulators({
  clientToken: env['SIM_SEARCH_CLIENT_TOKEN'] || 'demo-search-token',
  host: env['SIM_HOST'] || '127.0.0.1',
  searchPort: port(env['SIM_SEARCH_PORT'], 4001),
  chatPort: port(env['SIM_CHAT_PORT'], 4002),
  imagePort: port(env['SIM_IMAGE_PORT'], 4003),
  ...(env['SIM_IMAGE_PUBLIC_ORIGIN'] ? { imagePublicOrigin: env['SIM_IMAGE_PUBLIC_ORIGIN'] } : {}),
  ...(env['SIM_SEARCH_PUBLIC_ORIGIN']
    ? { searchPublicOrigin: env['SIM_SEARCH_PUBLIC_ORIGIN'] }
    : {}),
});
const admin = sims.chat.credentials('administrator');
process.stdout.write(
  `${JSON.stringify({
    msg: 'simulators listening',
    search: sims.searchOrigin,
    chat: sims.chatOrigin,
    images: sims.imageOrigin,
    chatServiceAccount: admin.email,
  })}\n`,
);
stop = () => void sims.close().then(() => process.exit(0));
