import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Seals chat API keys kept in sessions with AES-256-GCM, so a copy of the session store
 * (a Redis dump, a replica) holds no usable credentials. The session id's hash is the
 * additional authenticated data: a sealed key only opens under the session it was made for.
 */
export interface SessionSealer {
  seal(plaintext: string, idHash: string): string;
  /** undefined when the value was not sealed by this key for this session. */
  open(sealed: string, idHash: string): string | undefined;
}

export function createSessionSealer(secret: string | Buffer): SessionSealer {
  const key = Buffer.from(hkdfSync('sha256', secret, 'bff-gateway', 'session-api-key', 32));
  return {
    seal(plaintext, idHash) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(idHash));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(sealed, idHash) {
      const raw = Buffer.from(sealed, 'base64url');
      if (raw.length < 29) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12)).setAAD(
          Buffer.from(idHash),
        );
        decipher.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString(
          'utf8',
        );
      } catch {
        return undefined;
      }
    },
  };
}
