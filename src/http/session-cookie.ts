import type { IncomingMessage } from 'node:http';
import { parse } from 'cookie';
import type { Response } from 'express';

export interface SessionCookie {
  readonly name: string;
  read(req: IncomingMessage): string | undefined;
  set(res: Response, id: string): void;
  clear(res: Response): void;
}

export interface SessionCookieOptions {
  secure: boolean;
  sameSite: 'strict' | 'lax' | 'none';
  maxAgeSeconds: number;
}

/**
 * The browser holds only an opaque session id: HttpOnly (no script can read it), SameSite,
 * Secure unless configured off for local plain HTTP. With Secure it takes the `__Host-` prefix,
 * which browsers only accept without Domain and with Path=/, so no subdomain can plant or
 * shadow it.
 */
export function createSessionCookie(options: SessionCookieOptions): SessionCookie {
  const name = options.secure ? '__Host-bff_session' : 'bff_session';
  const attributes = {
    httpOnly: true,
    secure: options.secure,
    sameSite: options.sameSite,
    path: '/',
  } as const;
  return {
    name,
    read(req) {
      const header = req.headers.cookie;
      return header === undefined ? undefined : parse(header)[name];
    },
    set(res, id) {
      res.cookie(name, id, { ...attributes, maxAge: options.maxAgeSeconds * 1000 });
    },
    clear(res) {
      res.clearCookie(name, attributes);
    },
  };
}
