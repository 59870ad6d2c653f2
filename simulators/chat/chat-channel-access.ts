import type { ChatChannel, ChatUser } from './chat-model.js';
import type { ChatRealm } from './chat-realm.js';

/** GET /streams' parameters once read (chat-channel-routes.ts decides them per feature level). */
export interface StreamSelection {
  readonly includePublic: boolean;
  readonly includeWebPublic: boolean;
  readonly includeSubscribed: boolean;
  readonly excludeArchived: boolean;
  readonly includeAll: boolean;
  readonly includeOwnerSubscribed: boolean;
  readonly includeCanAccessContent: boolean;
}

/** Zulip's is_realm_admin: owners and administrators, bots of those roles included. */
export const isRealmAdmin = (user: ChatUser): boolean => user.role <= 200;

const isGuest = (user: ChatUser): boolean => user.role === 600;

const isSubscribed = (channel: ChatChannel, user: ChatUser): boolean =>
  channel.subscriberIds.includes(user.id);

/**
 * Zulip's user_has_metadata_access. Of the groups that grant it, only
 * can_administer_channel_group holds anyone here: the channel's creator (chat-channel-format.ts).
 */
function hasMetadataAccess(user: ChatUser, channel: ChatChannel): boolean {
  if (channel.isWebPublic || isSubscribed(channel, user)) return true;
  if (isGuest(user)) return false;
  return !channel.inviteOnly || isRealmAdmin(user) || channel.creatorId === user.id;
}

/**
 * Zulip's user_has_content_access. The groups that grant it (can_add_subscribers_group,
 * can_subscribe_group) are `nobody` on every channel here, so administrators get no content
 * access to private channels they are not subscribed to.
 */
function hasContentAccess(user: ChatUser, channel: ChatChannel): boolean {
  if (channel.isWebPublic || isSubscribed(channel, user)) return true;
  return !isGuest(user) && !channel.inviteOnly;
}

/** Zulip's get_web_public_streams_queryset condition. */
const isWebPublicListed = (channel: ChatChannel): boolean =>
  channel.isWebPublic &&
  !channel.inviteOnly &&
  channel.historyPublicToSubscribers &&
  !channel.isArchived;

/**
 * The channels GET /streams returns, unsorted, as Zulip's get_streams_for_user picks them:
 * include_all is metadata access; include_can_access_content is content access; otherwise the
 * union of the subscribed, public (never for guests), web-public and (for a bot) its owner's
 * subscribed channels. exclude_archived applies to every path.
 */
export function selectChannels(
  realm: ChatRealm,
  user: ChatUser,
  selection: StreamSelection,
): ChatChannel[] {
  const candidates = realm.channels.filter(
    (channel) => !(selection.excludeArchived && channel.isArchived),
  );
  if (selection.includeAll) return candidates.filter((c) => hasMetadataAccess(user, c));
  // Zulip asserts that a bot has an owner here; bots without one (system bots) never call it,
  // so the seeded legacy bot simply gets nothing more.
  const owner =
    selection.includeOwnerSubscribed && user.botOwnerId !== null
      ? realm.userById(user.botOwnerId)
      : undefined;
  const ownerSubscribed = (channel: ChatChannel): boolean =>
    owner !== undefined && isSubscribed(channel, owner);
  if (selection.includeCanAccessContent) {
    return candidates.filter((c) => hasContentAccess(user, c) || ownerSubscribed(c));
  }
  const publicToo = selection.includePublic && !isGuest(user);
  return candidates.filter(
    (channel) =>
      (selection.includeSubscribed && isSubscribed(channel, user)) ||
      (publicToo && !channel.inviteOnly) ||
      (selection.includeWebPublic && isWebPublicListed(channel)) ||
      ownerSubscribed(channel),
  );
}
