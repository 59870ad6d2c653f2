import { ChatApiError, badRequest, missingArgument } from './chat-errors.js';
import type { ChatUser } from './chat-model.js';
import type { ChatRealm } from './chat-realm.js';
import type { ChatRoute } from './chat-route.js';
import { formatOwnUser, formatUser } from './chat-user-format.js';

/** Django's EmailValidator, roughly: one @, no spaces, a dotted domain. */
const EMAIL_FORMAT = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The answer for every failed lookup (OpenAPI: "No such user", BAD_REQUEST, 400). */
const noSuchUser = (): ChatApiError => badRequest('No such user');

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Chat document 4.5. From feature level 302: the dummy `user{id}@{realm host}` finds any user
 * by id, and a real address finds the user only when their visibility lets the requester's
 * role see it. Before 302 only the API `email` (real for visibility `everyone`, else dummy)
 * matches. Bots and deactivated users can be looked up.
 */
function findUserByEmail(realm: ChatRealm, viewer: ChatUser, email: string): ChatUser {
  const wanted = email.trim().toLowerCase();
  if (realm.featureLevel < 302) {
    const user = realm.users.find(
      (candidate) => realm.apiEmail(candidate).toLowerCase() === wanted,
    );
    if (!user) throw noSuchUser();
    return user;
  }
  const dummy = new RegExp(`^user(\\d+)@${escapeRegExp(realm.host)}$`, 'i').exec(email);
  if (dummy) {
    const user = realm.userById(Number(dummy[1]));
    if (!user) throw noSuchUser();
    return user;
  }
  const visible = realm.visibleByRole(viewer);
  const user = realm.users.find(
    (candidate) =>
      candidate.deliveryEmail.toLowerCase() === wanted &&
      visible.includes(candidate.emailVisibility),
  );
  if (!user) throw noSuchUser();
  return user;
}

/**
 * Password login (OpenAPI /fetch_api_key). Failures follow Zulip's
 * get_api_key_fetch_authenticate_failure: a deactivated account is USER_DEACTIVATED, anything
 * else AUTHENTICATION_FAILED, both 401 (OpenAPI /rest-error-handling documents the former).
 */
const fetchApiKey: ChatRoute = {
  method: 'POST',
  pattern: /^\/fetch_api_key$/,
  authenticated: false,
  handle({ realm, params }) {
    const username = params.take('username');
    if (username === undefined) throw missingArgument('username');
    const password = params.take('password');
    if (password === undefined) throw missingArgument('password');
    if (!EMAIL_FORMAT.test(username.trim())) throw badRequest('Enter a valid email address.');

    const wanted = username.trim().toLowerCase();
    const user = realm.users.find((candidate) => candidate.deliveryEmail.toLowerCase() === wanted);
    // Zulip checks the account's state before the password (common_get_active_user).
    if (user && !user.isActive && password !== '') {
      throw new ChatApiError(401, 'USER_DEACTIVATED', 'Account is deactivated');
    }
    if (!user || user.password === null || user.password !== password) {
      throw new ChatApiError(
        401,
        'AUTHENTICATION_FAILED',
        'Your username or password is incorrect',
      );
    }
    const data: Record<string, unknown> = { api_key: user.apiKey, email: user.deliveryEmail };
    if (realm.featureLevel >= 171) data.user_id = user.id;
    return data;
  },
};

const getOwnUser: ChatRoute = {
  method: 'GET',
  pattern: /^\/users\/me$/,
  authenticated: true,
  handle: ({ realm, user }) => formatOwnUser(realm, user),
};

/**
 * GET /users/{email}. All-digit segments are Zulip's GET /users/{user_id}, which the simulator
 * does not offer, so they are left to the unknown-endpoint answer.
 */
const getUserByEmail: ChatRoute = {
  method: 'GET',
  pattern: /^\/users\/(?!me$)(?!\d+$)([^/]+)$/,
  minFeatureLevel: 39,
  authenticated: true,
  handle({ realm, params, path, user }) {
    // Declaration order of Zulip's view: include_custom_profile_fields, then client_gravatar.
    const includeCustomProfileFields = params.takeJsonBool('include_custom_profile_fields', false);
    const clientGravatar = params.takeJsonBool('client_gravatar', realm.featureLevel >= 92);
    const target = findUserByEmail(realm, user, path[0] ?? '');
    return {
      user: formatUser(realm, user, target, { clientGravatar, includeCustomProfileFields }),
    };
  },
};

export const USER_ROUTES: readonly ChatRoute[] = [fetchApiKey, getOwnUser, getUserByEmail];
