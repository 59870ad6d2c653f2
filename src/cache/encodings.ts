import zlib from 'node:zlib';

/** The content codings the gateway makes (contract section 4). */
export type Coding = 'br' | 'gzip';
const CODINGS = ['br', 'gzip'] as const satisfies readonly Coding[];

/**
 * A body's compressed forms, each made on the first answer that needed it (contract section 4,
 * as this gateway departs from it: docs/reliability.md, Compression); each decompresses to exactly the
 * identity body.
 */
export type EncodedBodies = { readonly [C in Coding]?: Buffer };

/** A compression made for one answer that the stored entry did not have yet. */
export interface MadeEncoding {
  readonly coding: Coding;
  readonly bytes: Buffer;
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
 * for br makes it here, and the write that stores the entry takes it from here (`madeOf`):
 * the bytes sent are the bytes stored. Weak, so it holds nothing its body does not.
 */
const made = new WeakMap<Buffer, Partial<Record<Coding, Buffer | Promise<Buffer>>>>();

/**
 * The body in `coding`: the stored bytes when the representation carries them (a cache hit:
 * no work at all), else the one compression of this body. An answer waiting for it (a miss the
 * browser asked compressed, a hit in a coding its entry lacks) gets it at once; a file held
 * at start-up (`later`) gets it once the event loop is free.
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

/**
 * The representation's compressed bodies with those already made of its body in this process
 * (`made`), making none: what a miss's answer compressed goes into the stored entry.
 */
export function madeOf(representation: Encodable): EncodedBodies | undefined {
  const codings = made.get(representation.body);
  let encoded = representation.encoded;
  for (const coding of CODINGS) {
    const bytes = codings?.[coding];
    if (encoded?.[coding] === undefined && Buffer.isBuffer(bytes)) {
      encoded = { ...encoded, [coding]: bytes };
    }
  }
  return encoded;
}

/** The bytes of every compressed body a representation holds (a store's budget counts them). */
export const encodedBytes = (encoded: EncodedBodies | undefined): number =>
  (encoded?.br?.length ?? 0) + (encoded?.gzip?.length ?? 0);

/**
 * The representation with both compressed bodies, made once each (see `made`): a static file
 * held in memory, compressed ahead of its first request.
 */
export async function withEncodings<T extends Encodable>(
  representation: T,
): Promise<T & { encoded: EncodedBodies }> {
  const [br, gzip] = await Promise.all([
    encodedBody(representation, 'br', true),
    encodedBody(representation, 'gzip', true),
  ]);
  return { ...representation, encoded: { br, gzip } };
}
