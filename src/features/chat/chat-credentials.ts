import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import { AppError, isAppError } from '../../errors/app-error.js';
import type { SessionCookie } from '../../http/session-cookie.js';
import type { SessionManager } from '../../sessions/session-manager.js';
import {
  refusedCredentialsOf,
  type ChatCall,
  type ChatCredentials,
} from '../../upstreams/chat/chat-client.js';

/** Decides whose chat rights a request uses, and what happens when the server refuses them. */
export interface ChatCredentialsResolver {
  resolve(req: Request, res: Response): Promise<ChatCredentials>;
  /** The credentials a request would get, or undefined where resolve() would refuse it. */
  peek(req: IncomingMessage): Promise<ChatCredentials | undefined>;
  /** The chat server answered 401 to the credentials resolve() gave: the error to answer with. */
  refused(req: Request, res: Response, error: AppError): Promise<AppError>;
}

/**
 * `CHAT_AUTH_MODE=service`: every call uses the service account. Only for a gateway behind a
 * trusted authenticating proxy: whoever reaches the gateway acts with the account's rights.
 * A refusal is the gateway's own misconfiguration: a 502, as mapped.
 */
export function createServiceCredentials(credentials: ChatCredentials): ChatCredentialsResolver {
  const frozen = Object.freeze({ ...credentials });
  return {
    resolve: () => Promise.resolve(frozen),
    peek: () => Promise.resolve(frozen),
    refused: (_req, _res, error) => Promise.resolve(error),
  };
}

/**
 * `CHAT_AUTH_MODE=session`: the logged-in user's own credentials, so the chat server enforces
 * that user's permissions. A key the server no longer accepts ends the session (401).
 */
export function createSessionCredentials(options: {
  sessions: SessionManager;
  cookie: SessionCookie;
}): ChatCredentialsResolver {
  const { sessions, cookie } = options;
  return {
    async resolve(req, res) {
      const id = cookie.read(req);
      const session = id === undefined ? undefined : await sessions.lookup(id);
      if (!session) {
        if (id !== undefined) cookie.clear(res);
        throw new AppError('UNAUTHORIZED', 'Log in first: this route needs a session.');
      }
      return session.credentials;
    },
    async peek(req) {
      const id = cookie.read(req);
      return id === undefined ? undefined : (await sessions.lookup(id))?.credentials;
    },
    async refused(req, res, error) {
      const id = cookie.read(req);
      if (id !== undefined) await sessions.destroy(id);
      cookie.clear(res);
      return new AppError(
        'UNAUTHORIZED',
        'The chat server no longer accepts this session; log in again.',
        {
          source: 'chat',
          cause: error,
        },
      );
    },
  };
}

/**
 * Runs a chat call as the request's caller. Only a refusal of this caller's own credentials
 * is theirs to answer (ending their session): a shared (single-flight) load may fail on
 * another caller's revoked key.
 */
export async function callAsCaller<T>(
  resolver: ChatCredentialsResolver,
  req: Request,
  res: Response,
  fn: (call: ChatCall) => Promise<T>,
): Promise<T> {
  const call = { credentials: await resolver.resolve(req, res), requestId: req.id };
  try {
    return await fn(call);
  } catch (error) {
    if (isAppError(error) && refusedCredentialsOf(error) === call.credentials) {
      throw await resolver.refused(req, res, error);
    }
    throw error;
  }
}
