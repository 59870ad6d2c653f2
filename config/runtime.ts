/**
 * How the gateway's Node process is started in production (the container's NODE_OPTIONS), and
 * therefore in `npm run bench`'s gateway rows. Measured there: under a stream of cache misses
 * V8 grows its old space to ~280 MB by default; a 128 MB cap holds the whole process under
 * 150 MB RSS at no throughput cost. The gateway's live heap stays ~25–40 MB (cache bodies are
 * buffers, outside this cap); raise it with SESSION_MEMORY_MAX in the hundreds of thousands.
 */
export const GATEWAY_NODE_OPTIONS = '--max-old-space-size=128';
