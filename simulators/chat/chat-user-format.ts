import { createHash } from 'node:crypto';
import type { ChatUser } from './chat-model.js';
import type { ChatRealm } from './chat-realm.js';

/** Field types whose values are Markdown and so carry `rendered_value` (short and long text). */
const MARKDOWN_FIELD_TYPES = new Set([1, 2]);

/**
 * avatar_url rule of chat document 4.5: null when the client computes gravatar URLs itself, may
 * see the real address (the gravatar hash is of it) and the user never uploaded an avatar.
 */
function avatarUrl(realm: ChatRealm, user: ChatUser, clientGravatar: boolean): string | null {
  if (user.avatarSource === 'gravatar') {
    if (clientGravatar) return null;
    const hash = createHash('md5').update(user.deliveryEmail.toLowerCase()).digest('hex');
    return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=${user.avatarVersion}`;
  }
  const file = createHash('sha1').update(`avatar:${user.id}`).digest('hex');
  return `https://${realm.host}/user_avatars/2/${file}.png?version=${user.avatarVersion}`;
}

function profileData(realm: ChatRealm, user: ChatUser): Record<string, Record<string, string>> {
  const data: Record<string, Record<string, string>> = {};
  for (const field of realm.customProfileFields) {
    const entry = user.profileData[field.id];
    if (!entry) continue;
    data[String(field.id)] =
      MARKDOWN_FIELD_TYPES.has(field.type) && entry.renderedValue !== undefined
        ? { value: entry.value, rendered_value: entry.renderedValue }
        : { value: entry.value };
  }
  return data;
}

export interface UserFormatOptions {
  clientGravatar: boolean;
  includeCustomProfileFields: boolean;
}

/**
 * The User object of chat document 2.4 as `viewer` sees `target`, with the fields each feature
 * level adds (section 9) and the OpenAPI's `is_imported_stub` from feature level 433.
 */
export function formatUser(
  realm: ChatRealm,
  viewer: ChatUser,
  target: ChatUser,
  options: UserFormatOptions,
): Record<string, unknown> {
  const level = realm.featureLevel;
  const canSee = realm.canSeeDeliveryEmail(viewer, target);
  const isBot = target.botType !== null;
  const user: Record<string, unknown> = {
    user_id: target.id,
    email: realm.apiEmail(target),
    full_name: target.fullName,
    date_joined: target.dateJoined,
    is_active: target.isActive,
    is_admin: target.role <= 200,
    is_guest: target.role === 600,
    is_bot: isBot,
    bot_type: target.botType,
    timezone: target.timezone,
    avatar_url: avatarUrl(realm, target, options.clientGravatar && canSee),
    avatar_version: target.avatarVersion,
  };
  // Before 163, delivery_email appeared only for a restricted address the viewer could see.
  if (level >= 163) user.delivery_email = canSee ? target.deliveryEmail : null;
  else if (canSee && realm.apiEmail(target) !== target.deliveryEmail) {
    user.delivery_email = target.deliveryEmail;
  }
  if (level >= 8) user.is_owner = target.role === 100;
  if (level >= 59) user.role = target.role;
  if (isBot && level >= 1) user.bot_owner_id = target.botOwnerId;
  if (level >= 433) user.is_imported_stub = false;
  if (options.includeCustomProfileFields && !isBot) user.profile_data = profileData(realm, target);
  return user;
}

/**
 * GET /users/me as the OpenAPI's get-own-user schema lists it (no bot fields there), with the
 * deprecated max_message_id.
 */
export function formatOwnUser(realm: ChatRealm, user: ChatUser): Record<string, unknown> {
  const own: Record<string, unknown> = {
    user_id: user.id,
    email: realm.apiEmail(user),
    delivery_email: user.deliveryEmail,
    full_name: user.fullName,
    is_admin: user.role <= 200,
    is_owner: user.role === 100,
    role: user.role,
    is_guest: user.role === 600,
    is_bot: user.botType !== null,
    is_active: user.isActive,
    timezone: user.timezone,
    date_joined: user.dateJoined,
    avatar_url: avatarUrl(realm, user, false),
    avatar_version: user.avatarVersion,
    max_message_id: 4242,
  };
  if (realm.featureLevel >= 433) own.is_imported_stub = false;
  if (user.botType === null) own.profile_data = profileData(realm, user);
  return own;
}
