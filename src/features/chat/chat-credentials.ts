import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import { AppError, isAppError } from '../../errors/app-error.js';
import type { RouteGuard } from '../../http/route-mount.js';
import type { SessionCookie } from '../../http/session-cookie.js';
import type { Session, SessionManager } from '../../sessions/session-manager.js';
import {
  refusedCredentialsOf,
  type ChatCall,
  type ChatCredentials,
} from '../../upstreams/chat/chat-client.js';

/** Who a request acts as: the chat credentials, and the chat user's id where a session says it. */
export interface Caller {
  credentials: ChatCredentials;
  /** Session mode: the chat server's id of the logged-in user (quotas count by it). */
  userId?: number;
}

/** Decides whose chat rights a request uses, and what happens when the server refuses them. */
export interface ChatCredentialsResolver {
  /** The caller of every request, when one account makes every call (service mode). */
  readonly fixed?: Caller;
  /** The caller a request would be, or undefined where it has none (no session). */
  peek(req: IncomingMessage): Promise<Caller | undefined>;
  /** The chat server answered 401 to the caller's credentials: the error to answer with. */
  refused(req: Request, res: Response, error: AppError): Promise<AppError>;
  /** The problem for a request peek() found no caller in. */
  refuse(req: Request, res: Response): AppError;
}

/**
 * `CHAT_AUTH_MODE=service`: every call uses the service account. Only for a gateway behind a
 * trusted authenticating proxy: whoever reaches the gateway acts with the account's rights.
 * A refusal is the gateway's own misconfiguration: a 502, as mapped.
 */
export function createServiceCredentials(credentials: ChatCredentials): ChatCredentialsResolver {
  const frozen = Object.freeze({ ...credentials });
  const caller: Caller = Object.freeze({ credentials: frozen });
  return {
    fixed: caller,
    peek: () => Promise.resolve(caller),
    refused: (_req, _res, error) => Promise.resolve(error),
    // The service account is every request's caller: nobody is refused.
    refuse: () => new AppError('INTERNAL', 'The service account is missing.'),
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
  const callerOf = (session: Session): Caller => ({
    credentials: session.credentials,
    userId: session.profile.userId,
  });
  const refuse = (req: Request, res: Response) => {
    if (cookie.read(req) !== undefined) cookie.clear(res);
    return new AppError('UNAUTHORIZED', 'Log in first: this route needs a session.');
  };
  return {
    refuse,
    async peek(req) {
      const id = cookie.read(req);
      const session = id === undefined ? undefined : await sessions.lookup(id);
      return session && callerOf(session);
    },
    async refused(req, res, error) {
      const id = cookie.read(req);
      if (id !== undefined) await sessions.destroy(id, 'refused');
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
 * The `chatCaller` guard of the route table: who a chat route calls the chat server as. A
 * per-user entry is the chat user's (session mode) or the service account's (service mode).
 */
export function createChatCallerGuard(resolver: ChatCredentialsResolver): RouteGuard<Caller> {
  return {
    peek: (req) => resolver.fixed ?? resolver.peek(req),
    refuse: (req, res) => resolver.refuse(req, res),
    owner: (caller) => (caller.userId === undefined ? 'service' : String(caller.userId)),
    async run(req, res, caller, work) {
      try {
        return await work();
      } catch (error) {
        // Only a refusal of this caller's own key is theirs to answer (ending their session): a
        // shared (single-flight) load may fail on another caller's revoked key.
        if (isAppError(error) && refusedCredentialsOf(error) === caller.credentials) {
          throw await resolver.refused(req, res, error);
        }
        throw error;
      }
    },
  };
}

/** A chat call made as the admitted caller, under the request's id. */
export const callOf = (req: Pick<IncomingMessage, 'id'>, caller: Caller): ChatCall => ({
  credentials: caller.credentials,
  requestId: req.id,
});
