import zlib from 'node:zlib';

/** The content codings the gateway makes (contract section 4). */
export type Coding = 'br' | 'gzip';

/** A body compressed both ways; each decompresses to exactly the identity body. */
export interface EncodedBodies {
  readonly br: Buffer;
  readonly gzip: Buffer;
}

/** A body and, once made, its compressed forms. */
export interface Encodable {
  readonly body: Buffer;
  readonly encoded?: EncodedBodies;
}

/**
 * Brotli quality and gzip level, measured on a 13 KB search answer from the search simulator
 * (bench/compression-levels.ts, numbers in docs/reliability.md, Compression): brotli 5 is within
 * 10% of quality 11's size at under 1% of its time (0.16 ms against 42 ms), and from quality 9
 * on the time jumps to milliseconds; gzip 6 (zlib's default) is as small as 9.
 */
export const BROTLI_QUALITY = 5;
export const GZIP_LEVEL = 6;

/**
 * Compresses in one synchronous zlib call. zlib's asynchronous form runs the same work on the
 * thread pool but costs twice the CPU for a search answer (a stream, its chunks and callbacks:
 * 940 against 455 µs for brotli, 470 against 239 µs for gzip, on an 18 KB answer on this
 * 2-core machine), and CPU per request is what a miss is priced by (issue 18). Called through
 * the `zlib` module object at each call, never a copy taken at import, so a test can count it.
 */
export function compress(body: Buffer, coding: Coding): Buffer {
  if (coding === 'gzip') return zlib.gzipSync(body, { level: GZIP_LEVEL });
  return zlib.brotliCompressSync(body, {
    params: {
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });
}

/** The same, after the event loop has written what it was writing: off the answer's path. */
export function compressLater(body: Buffer, coding: Coding): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    setImmediate(() => {
      try {
        resolve(compress(body, coding));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

/**
 * Compressions made or under way, per identity body (the Buffer itself, so a representation
 * and the cache entry built from it by spreading share them). The answer to a miss that asked
 * for br and the write that stores the entry each ask here, neither knowing of the other, and
 * the one compression serves both: the bytes sent are the bytes stored. Weak, so it holds
 * nothing its body does not.
 */
const made = new WeakMap<Buffer, Partial<Record<Coding, Buffer | Promise<Buffer>>>>();

/**
 * The body in `coding`: the stored bytes when the representation carries them (a cache hit:
 * no work at all), else the one compression of this body. An answer waiting for it (a miss the
 * browser asked compressed) gets it at once; the store's write (`later`) gets it after the
 * answer is out.
 */
export function encodedBody(
  representation: Encodable,
  coding: Coding,
  later = false,
): Buffer | Promise<Buffer> {
  const stored = representation.encoded?.[coding];
  if (stored !== undefined) return stored;
  const { body } = representation;
  let codings = made.get(body);
  if (codings === undefined) made.set(body, (codings = {}));
  return (codings[coding] ??= later ? compressLater(body, coding) : compress(body, coding));
}

/** The representation with both compressed bodies, made once each (see `made`). */
export async function withEncodings<T extends Encodable>(
  representation: T,
): Promise<T & { encoded: EncodedBodies }> {
  const { encoded } = representation;
  if (encoded !== undefined) return { ...representation, encoded };
  const [br, gzip] = await Promise.all([
    encodedBody(representation, 'br', true),
    encodedBody(representation, 'gzip', true),
  ]);
  return { ...representation, encoded: { br, gzip } };
}
