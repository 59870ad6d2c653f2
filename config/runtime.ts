/**
 * How the gateway's Node process is started in production (the container's command line: Node
 * refuses the pretenuring flag in NODE_OPTIONS), and therefore in `npm run bench`'s gateway
 * rows. Measured there: under a stream of cache misses V8 grows its old space to ~280 MB by
 * default; a 128 MB cap holds the whole process under 150 MB RSS at no throughput cost. The
 * gateway's live heap stays ~25–40 MB (cache bodies are buffers, outside this cap); raise it
 * with SESSION_MEMORY_MAX in the hundreds of thousands.
 *
 * No allocation-site pretenuring: V8 moves an allocation site's objects straight to the old
 * generation once most of them have outlived a few collections. The sites a request allocates
 * at are the same for an event stream (which lives for hours) as for a search (milliseconds),
 * so an instance that first took thousands of streams (a rolling deploy: every page reconnects
 * to the new instances) then allocated each search's garbage in the old generation, where only
 * a full collection frees it. Measured with 10,000 streams opened first, runs alternating: a
 * hot hit cost 144–169 µs with the streams open and 120–139 once they closed, against 82–85
 * and 80–83 with the flag (docs/log/measurements.md). On an instance that never saw the streams the
 * flag costs nothing measurable (G1, G3, G7 at 1.05, 0.99, 0.99 of the CPU).
 *
 * A growing factor of 1.6 (heap-growing-percent): under the cap V8 set the old generation's
 * limit so close to its live heap (~28 MB live, ~51 MB limit) that the room left was smaller
 * than the young generation, and V8 started marking again right after each full collection:
 * 8-9 full collections per 1,000 misses, a third of a miss's CPU on V8's own threads. With
 * 1.6 they are ~3: a miss costs 0.81-0.82 of its CPU (two runs with each row and its twin
 * loaded at the same time, BENCH_PAIRED=on), the Zipf mix 0.88-0.99, a Cluster hit 0.95. It
 * adds ~12 MB of peak RSS under a stream of misses (150 MB); under the mix, the smaller body
 * layer (CACHE_MAX_BYTES, 8 MiB) pays for it (159 MB against 156).
 *
 * No memory reducer: once allocation stops, V8's memory reducer runs full collections that
 * shrink the heap, and the first seconds of load after it cost far more (whether through the
 * smaller heap or the code it let go was not settled). Measured with three
 * gateways loaded at the same time (G3's misses), the window after 150 s idle cost 2,390 µs per
 * miss against 1,556 before the idle; with the flag 1,538 against 1,568, at the same peak RSS
 * (137 and 138 MB). The process then keeps the heap its load grew while idle, within the cap.
 */
export const GATEWAY_NODE_OPTIONS =
  '--max-old-space-size=128 --heap-growing-percent=60 --no-allocation-site-pretenuring --no-memory-reducer';

/**
 * The environment the gateway's process starts with, beside its node options (the container's
 * ENV, `npm start`, and so `npm run bench`'s gateway rows). MALLOC_ARENA_MAX=2: glibc may give
 * each thread that allocates (V8's collector and compiler threads, libuv's pool) a malloc arena
 * of its own, up to eight per core, each keeping what was freed in it. With two, the peak RSS
 * under misses and the Zipf mix was 2–8 MB lower (G7: 153 MB against 159 and 161 in two runs)
 * at 0.95–1.00 of the CPU, each row and its twin loaded at the same time
 * (docs/log/measurements.md, 2026-11-28).
 */
export const GATEWAY_ENVIRONMENT: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** GATEWAY_ENVIRONMENT as a shell or Dockerfile writes it: `NAME=value` pairs. */
export const gatewayEnvironmentAssignments = (): string =>
  Object.entries(GATEWAY_ENVIRONMENT)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
