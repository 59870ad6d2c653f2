import { badRequest, unauthorized } from './chat-errors.js';
import type { ChatUser } from './chat-model.js';
import type { ChatRealm } from './chat-realm.js';

/** Zulip's has_api_key_format. */
const API_KEY_FORMAT = /^[A-Za-z0-9]{32}$/;

/**
 * HTTP Basic authentication of the REST API (chat document 5: username = email, password = API
 * key), in the order of Zulip's get_basic_credentials → validate_api_key.
 *
 * Bodies: the bad-key and deactivated-account answers use the codes the OpenAPI file documents
 * under /rest-error-handling (INVALID_API_KEY, USER_DEACTIVATED); a missing or unreadable header
 * uses Zulip's UnauthorizedError (UNAUTHORIZED), which the OpenAPI file does not list. All of
 * them are 401 with `WWW-Authenticate: Basic realm="zulip"`, as the server sends them.
 */
export function authenticate(
  realm: ChatRealm,
  authorization: string | string[] | undefined,
): ChatUser {
  const header = Array.isArray(authorization) ? authorization[0] : authorization;
  if (header === undefined) {
    throw unauthorized(
      'UNAUTHORIZED',
      'Not logged in: API authentication or user session required',
    );
  }
  const parts = header.trim().split(/\s+/);
  if (parts.length !== 2) {
    throw unauthorized('UNAUTHORIZED', 'Invalid authorization header for basic auth');
  }
  const [scheme = '', encoded = ''] = parts;
  // Zulip raises a plain JsonableError here, so this one is a 400 without WWW-Authenticate.
  if (scheme.toLowerCase() !== 'basic') {
    throw badRequest('This endpoint requires HTTP basic authentication.');
  }
  const decoded = Buffer.from(encoded, 'base64').toString('utf8').split(':');
  if (decoded.length !== 2) {
    throw unauthorized('UNAUTHORIZED', 'Invalid authorization header for basic auth');
  }
  const email = (decoded[0] ?? '').trim();
  const apiKey = (decoded[1] ?? '').trim();

  if (!API_KEY_FORMAT.test(apiKey)) throw unauthorized('INVALID_API_KEY', 'Malformed API key');
  const user = realm.users.find((candidate) => candidate.apiKey === apiKey);
  // A valid key paired with another user's address is the same error as an unknown key.
  if (!user || user.deliveryEmail.toLowerCase() !== email.toLowerCase()) {
    throw unauthorized('INVALID_API_KEY', 'Invalid API key');
  }
  if (!user.isActive) throw unauthorized('USER_DEACTIVATED', 'Account is deactivated');
  return user;
}

/** `Authorization` header value for a user's Basic credentials. */
export function toBasicAuth(email: string, apiKey: string): string {
  return `Basic ${Buffer.from(`${email}:${apiKey}`, 'utf8').toString('base64')}`;
}
