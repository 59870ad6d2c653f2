import { checkEmojiRequest, emojiDataForName } from './chat-emoji.js';
import { badRequest } from './chat-errors.js';
import type { ChatUser, UserStatus } from './chat-model.js';
import type { ChatRealm } from './chat-realm.js';
import type { ChatRoute } from './chat-route.js';

/** Chat document 8: 60 characters, counted as Unicode code points after trimming. */
const STATUS_TEXT_LIMIT = 60;

/**
 * The target of an administrator's change, checked like Zulip's access_user_by_id with
 * allow_bots=False and for_admin=True: unknown ids and bots are "No such user" (the OpenAPI's
 * answer for an unknown user), then a deactivated target, then the caller's permission.
 */
function accessTarget(realm: ChatRealm, caller: ChatUser, userId: number): ChatUser {
  const target = realm.userById(userId);
  if (!target || target.botType !== null) throw badRequest('No such user');
  if (!target.isActive) throw badRequest('User is deactivated');
  if (caller.role > 200) throw badRequest('Insufficient permission');
  return target;
}

interface StatusInput {
  statusText: string | undefined;
  emojiName: string | undefined;
  emojiCode: string | undefined;
  reactionType: string | undefined;
}

/** Zulip's check_update_user_status: which values the request changes, validated. */
function checkStatusChange(realm: ChatRealm, input: StatusInput): Partial<UserStatus> {
  const { statusText, emojiName } = input;
  let { emojiCode, reactionType } = input;
  if (statusText === undefined && emojiName === undefined) {
    throw badRequest('Client did not pass any new values.');
  }
  if (emojiName === '') {
    // An empty name clears the emoji.
    emojiCode = '';
    reactionType = 'unicode_emoji';
  } else if (emojiName !== undefined) {
    if (emojiCode === undefined || reactionType === undefined) {
      const resolved = emojiDataForName(realm.customEmoji, emojiName);
      emojiCode ??= resolved.emojiCode;
      reactionType ??= resolved.reactionType;
    }
    checkEmojiRequest(realm.customEmoji, emojiName, emojiCode, reactionType);
  } else if (reactionType || emojiCode) {
    throw badRequest(
      'Client must pass emoji_name if they pass either emoji_code or reaction_type.',
    );
  }
  const change: Partial<UserStatus> = {};
  if (statusText !== undefined) change.statusText = statusText;
  if (emojiName !== undefined && emojiCode !== undefined && reactionType !== undefined) {
    change.emojiName = emojiName;
    change.emojiCode = emojiCode;
    change.reactionType = reactionType;
  }
  return change;
}

/**
 * Chat document 4.1 / 7.2 (OpenAPI update-status-for-user), new at feature level 407. The
 * steps run in Zulip's order: the bot refusal of levels before 473, the status_text length
 * (checked while parsing parameters, so even before the permission), the target and the
 * permission, then the values.
 */
const updateStatusForUser: ChatRoute = {
  method: 'POST',
  pattern: /^\/users\/(\d+)\/status$/,
  minFeatureLevel: 407,
  authenticated: true,
  handle({ realm, params, path, user }) {
    if (realm.featureLevel < 473 && user.botType !== null) {
      throw badRequest('This endpoint does not accept bot requests.');
    }
    const rawText = params.take('status_text');
    const statusText = rawText?.trim();
    if (statusText !== undefined && [...statusText].length > STATUS_TEXT_LIMIT) {
      throw badRequest(`status_text is too long (limit: ${STATUS_TEXT_LIMIT} characters)`);
    }
    const emojiName = params.take('emoji_name');
    const emojiCode = params.take('emoji_code');
    const reactionType = params.take('reaction_type');
    const target = accessTarget(realm, user, Number(path[0]));
    const change = checkStatusChange(realm, { statusText, emojiName, emojiCode, reactionType });

    const current = realm.statuses.get(target.id) ?? {
      statusText: '',
      emojiName: '',
      emojiCode: '',
      reactionType: 'unicode_emoji',
    };
    realm.statuses.set(target.id, { ...current, ...change });
    return {};
  },
};

export const STATUS_ROUTES: readonly ChatRoute[] = [updateStatusForUser];
