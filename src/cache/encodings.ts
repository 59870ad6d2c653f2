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
 * (bench/compression-levels.ts, numbers in the README's caching section): brotli 5 is within
 * 10% of quality 11's size at under 1% of its time (0.16 ms against 42 ms), and from quality 9
 * on the time jumps to milliseconds; gzip 6 (zlib's default) is as small as 9.
 */
export const BROTLI_QUALITY = 5;
export const GZIP_LEVEL = 6;

/**
 * Compresses off the event loop (zlib's thread pool). Called through the `zlib` module object
 * at each call, never a copy taken at import, so a test can count the calls.
 */
export function compress(body: Buffer, coding: Coding): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, result: Buffer) => (error ? reject(error) : resolve(result));
    if (coding === 'gzip') {
      zlib.gzip(body, { level: GZIP_LEVEL }, done);
      return;
    }
    zlib.brotliCompress(
      body,
      {
        params: {
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
          [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      },
      done,
    );
  });
}

/**
 * Compressions made or under way, per identity body (the Buffer itself, so a representation
 * and the cache entry built from it by spreading share them). The answer to a miss that asked
 * for br and the write that stores the entry each ask here, neither knowing of the other, and
 * the one compression serves both: the bytes sent are the bytes stored. Weak, so it holds
 * nothing its body does not.
 */
const made = new WeakMap<Buffer, Partial<Record<Coding, Promise<Buffer>>>>();

/**
 * The body in `coding`: the stored bytes when the representation carries them (a cache hit:
 * no work at all), else the one compression of this body, started on first demand.
 */
export function encodedBody(representation: Encodable, coding: Coding): Buffer | Promise<Buffer> {
  const stored = representation.encoded?.[coding];
  if (stored !== undefined) return stored;
  const { body } = representation;
  let codings = made.get(body);
  if (codings === undefined) made.set(body, (codings = {}));
  return (codings[coding] ??= compress(body, coding));
}

/** The representation with both compressed bodies, made once each (see `made`). */
export async function withEncodings<T extends Encodable>(
  representation: T,
): Promise<T & { encoded: EncodedBodies }> {
  const { encoded } = representation;
  if (encoded !== undefined) return { ...representation, encoded };
  const [br, gzip] = await Promise.all([
    encodedBody(representation, 'br'),
    encodedBody(representation, 'gzip'),
  ]);
  return { ...representation, encoded: { br, gzip } };
}
