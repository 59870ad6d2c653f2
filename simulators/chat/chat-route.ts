import type { ChatUser } from './chat-model.js';
import type { ChatParams } from './chat-params.js';
import type { ChatRealm } from './chat-realm.js';

/** What a route handler gets: the realm, the parameters and the path's captured segments. */
export interface ChatRouteContext {
  realm: ChatRealm;
  params: ChatParams;
  /** Decoded capture groups of the route's pattern. */
  path: readonly string[];
}

/** A handler returns the success data; errors are thrown as ChatApiError. */
type ChatRouteBase = {
  method: 'GET' | 'POST' | 'DELETE';
  /** Matched against the path below /api/v1, anchored; groups become `path`. */
  pattern: RegExp;
  /** The endpoint does not exist below this feature level (chat document 9). */
  minFeatureLevel?: number;
};

export type ChatRoute = ChatRouteBase &
  (
    | {
        authenticated: true;
        handle(context: ChatRouteContext & { user: ChatUser }): Record<string, unknown>;
      }
    | { authenticated: false; handle(context: ChatRouteContext): Record<string, unknown> }
  );
