import type { Session, SessionManager } from '../../sessions/session-manager.js';
import type { ChatClient } from '../../upstreams/chat/chat-client.js';
import type { LoginBody } from './auth-inputs.js';

export interface AuthService {
  /**
   * Checks the credentials with the chat server and opens a new session (a new id), ending
   * `replacing`, the session the browser had, if any (rotation).
   */
  login(
    input: LoginBody,
    requestId: string,
    replacing?: string,
  ): Promise<{ id: string; session: Session }>;
}

/**
 * Password logins go through the chat server's `/fetch_api_key`; API-key logins are checked
 * with `/users/me`. Either way the gateway learns who the user is from the server, never from
 * the request, and keeps the key server-side.
 */
export function createAuthService(options: {
  chat: ChatClient;
  sessions: SessionManager;
}): AuthService {
  const { chat, sessions } = options;
  return {
    async login(input, requestId, replacing) {
      const credentials =
        input.password !== undefined
          ? await chat.fetchApiKey(input.email, input.password, requestId)
          : { email: input.email, apiKey: input.api_key ?? '' };
      const me = await chat.getOwnUser({ credentials, requestId });
      return sessions.create(
        { userId: me.user_id, email: credentials.email, fullName: me.full_name, role: me.role },
        credentials,
        { replacing },
      );
    },
  };
}
