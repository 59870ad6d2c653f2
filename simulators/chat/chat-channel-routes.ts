import { isRealmAdmin, selectChannels, type StreamSelection } from './chat-channel-access.js';
import { streamJson } from './chat-channel-format.js';
import { badRequest } from './chat-errors.js';
import type { ChatUser } from './chat-model.js';
import type { ChatParams } from './chat-params.js';
import type { ChatRoute } from './chat-route.js';

/** exclude_archived appeared at 315; before, archived channels were never returned. */
const EXCLUDE_ARCHIVED_SINCE = 315;
/**
 * At 356 include_all and include_can_access_content appeared, and include_all_active became
 * include_all.
 */
const INCLUDE_ALL_SINCE = 356;

/** Reads a Json[bool] only where the feature level knows it; otherwise it stays ignored. */
function takeFrom(
  params: ChatParams,
  level: number,
  since: number,
): (name: string, fallback: boolean) => boolean {
  return (name, fallback) => (level >= since ? params.takeJsonBool(name, fallback) : fallback);
}

/**
 * GET /streams' parameters in the order of Zulip's get_streams_backend (a malformed one is
 * reported in that order). Below feature level 356 include_all_active was admin-only and
 * answered "User not authorized for this query" to anyone else (Zulip 9's
 * get_streams_for_user); from 356 it is include_all, open to everyone.
 */
function readSelection(
  params: ChatParams,
  level: number,
  user: ChatUser,
): StreamSelection & { includeDefault: boolean } {
  const archivedParam = takeFrom(params, level, EXCLUDE_ARCHIVED_SINCE);
  const allParam = takeFrom(params, level, INCLUDE_ALL_SINCE);
  const includePublic = params.takeJsonBool('include_public', true);
  const includeWebPublic = params.takeJsonBool('include_web_public', false);
  const includeSubscribed = params.takeJsonBool('include_subscribed', true);
  // Before 315 the parameter is unknown and archived channels are always left out.
  const excludeArchived = archivedParam('exclude_archived', true);
  const includeAll = allParam('include_all', false);
  const includeAllActive = params.takeJsonBool('include_all_active', false);
  const includeDefault = params.takeJsonBool('include_default', false);
  const includeOwnerSubscribed = params.takeJsonBool('include_owner_subscribed', false);
  const includeCanAccessContent = allParam('include_can_access_content', false);
  if (includeAllActive && level < INCLUDE_ALL_SINCE && !isRealmAdmin(user)) {
    throw badRequest('User not authorized for this query');
  }
  return {
    includePublic,
    includeWebPublic,
    includeSubscribed,
    excludeArchived,
    includeAll: includeAll || includeAllActive,
    includeOwnerSubscribed,
    includeCanAccessContent,
    includeDefault,
  };
}

/** Python's str ordering (Zulip sorts by `name`): code points, not UTF-16 units or locale. */
function byCodePoints(a: string, b: string): number {
  const left = Array.from(a, (ch) => ch.codePointAt(0) ?? 0);
  const right = Array.from(b, (ch) => ch.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(left.length, right.length); i += 1) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

/**
 * GET /streams (zulip-openapi.yaml, operationId get-streams): the channels the caller may see
 * for the given parameters, sorted by name as Zulip's do_get_streams sorts them; `is_default`
 * only with include_default.
 */
const getStreams: ChatRoute = {
  method: 'GET',
  pattern: /^\/streams$/,
  authenticated: true,
  handle({ realm, params, user }) {
    const selection = readSelection(params, realm.featureLevel, user);
    const streams = selectChannels(realm, user, selection)
      .sort((a, b) => byCodePoints(a.name, b.name))
      .map((channel) => ({
        ...streamJson(channel, realm),
        ...(selection.includeDefault ? { is_default: channel.isDefault } : {}),
      }));
    return { streams };
  },
};

export const CHANNEL_ROUTES: readonly ChatRoute[] = [getStreams];
