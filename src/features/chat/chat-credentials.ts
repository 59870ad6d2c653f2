import type { Request } from 'express';
import { AppError } from '../../errors/app-error.js';
import type { ChatCredentials } from '../../upstreams/chat/chat-client.js';

/** Decides whose chat rights a request uses. */
export type ChatCredentialsResolver = (req: Request) => ChatCredentials | Promise<ChatCredentials>;

/**
 * `CHAT_AUTH_MODE=service`: every call uses the service account. Only for a gateway behind a
 * trusted authenticating proxy: whoever reaches the gateway acts with the account's rights.
 */
export function createServiceCredentials(credentials: ChatCredentials): ChatCredentialsResolver {
  const frozen = Object.freeze({ ...credentials });
  return () => frozen;
}

/** `CHAT_AUTH_MODE=session` until per-user sessions exist: nobody is logged in. */
export function createNoSessionCredentials(): ChatCredentialsResolver {
  return () => {
    throw new AppError('UNAUTHORIZED', 'Log in first: chat routes need a session in session mode.');
  };
}
