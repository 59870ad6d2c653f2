import type { ChatChannel } from './chat-model.js';
import type { ChatRealm } from './chat-realm.js';

/**
 * The realm's system groups (Zulip makes them with the realm; their ids differ from server to
 * server, these are this realm's). Channel permission settings name them by id.
 */
export const SYSTEM_GROUP = {
  internet: 1,
  owners: 2,
  administrators: 3,
  moderators: 4,
  fullMembers: 5,
  members: 6,
  everyone: 7,
  nobody: 8,
} as const;

/** Zulip's Stream.STREAM_POST_POLICY_EVERYONE and STREAM_POST_POLICY_ADMINS. */
const POST_POLICY_EVERYONE = 1;
const POST_POLICY_ADMINS = 2;

type Value = (channel: ChatChannel, realm: ChatRealm) => unknown;

/**
 * One field of a stream object: the feature level it appeared at (its "Changes" note in
 * zulip-openapi.yaml, BasicChannelBase) and, for a renamed field, the level it left at.
 */
interface StreamField {
  readonly name: string;
  readonly since: number;
  readonly until?: number;
  readonly value: Value;
}

const nobody: Value = () => SYSTEM_GROUP.nobody;
const everyone: Value = () => SYSTEM_GROUP.everyone;

/**
 * Zulip's default for can_administer_channel_group is "channel_creator": an anonymous group
 * holding the creator (GroupSettingValue's object form); nobody when there is no creator.
 */
const creatorGroup: Value = (channel) =>
  channel.creatorId === null
    ? SYSTEM_GROUP.nobody
    : { direct_members: [channel.creatorId], direct_subgroups: [] };

const postPolicy = (channel: ChatChannel): number =>
  channel.adminsOnlyPosting ? POST_POLICY_ADMINS : POST_POLICY_EVERYONE;

/**
 * The stream object of GET /streams in the order of Zulip's stream_to_dict. Group settings hold
 * Zulip's defaults (Stream.stream_permission_group_settings); only can_send_message_group
 * follows the channel, and stream_post_policy is derived from it as Zulip derives it.
 */
const STREAM_FIELDS: readonly StreamField[] = [
  { name: 'is_archived', since: 315, value: (c) => c.isArchived },
  { name: 'can_add_subscribers_group', since: 342, value: nobody },
  { name: 'can_administer_channel_group', since: 325, value: creatorGroup },
  { name: 'can_create_topic_group', since: 441, value: everyone },
  { name: 'can_delete_any_message_group', since: 407, value: nobody },
  { name: 'can_delete_own_message_group', since: 407, value: everyone },
  { name: 'can_move_messages_out_of_channel_group', since: 396, value: nobody },
  { name: 'can_move_messages_within_channel_group', since: 396, value: nobody },
  {
    name: 'can_send_message_group',
    since: 333,
    value: (c) => (c.adminsOnlyPosting ? SYSTEM_GROUP.administrators : SYSTEM_GROUP.everyone),
  },
  // Named can_remove_subscribers_group_id from feature level 142 until 197.
  {
    name: 'can_remove_subscribers_group_id',
    since: 142,
    until: 197,
    value: () => SYSTEM_GROUP.administrators,
  },
  { name: 'can_remove_subscribers_group', since: 197, value: () => SYSTEM_GROUP.administrators },
  { name: 'can_resolve_topics_group', since: 402, value: nobody },
  { name: 'can_subscribe_group', since: 357, value: nobody },
  { name: 'creator_id', since: 254, value: (c) => c.creatorId },
  { name: 'date_created', since: 30, value: (c) => c.dateCreated },
  { name: 'description', since: 0, value: (c) => c.description },
  { name: 'first_message_id', since: 0, value: (c) => c.firstMessageId },
  { name: 'folder_id', since: 389, value: (c) => c.folderId },
  { name: 'is_recently_active', since: 323, value: (c) => c.isRecentlyActive },
  { name: 'history_public_to_subscribers', since: 0, value: (c) => c.historyPublicToSubscribers },
  { name: 'invite_only', since: 0, value: (c) => c.inviteOnly },
  { name: 'is_web_public', since: 0, value: (c) => c.isWebPublic },
  { name: 'message_retention_days', since: 17, value: (c) => c.messageRetentionDays },
  { name: 'name', since: 0, value: (c) => c.name },
  { name: 'default_push_notifications', since: 507, value: (c) => c.defaultPushNotifications },
  { name: 'rendered_description', since: 0, value: (c) => c.renderedDescription },
  { name: 'stream_id', since: 0, value: (c) => c.id },
  { name: 'stream_post_policy', since: 1, value: postPolicy },
  {
    name: 'is_announcement_only',
    since: 0,
    value: (c) => postPolicy(c) === POST_POLICY_ADMINS,
  },
  { name: 'stream_weekly_traffic', since: 199, value: (c) => c.weeklyTraffic },
  {
    name: 'subscriber_count',
    since: 394,
    // Zulip counts non-deactivated subscribers, bots included.
    value: (c, realm) => c.subscriberIds.filter((id) => realm.userById(id)?.isActive).length,
  },
  { name: 'topics_policy', since: 392, value: () => 'inherit' },
];

/** A channel as GET /streams shows it at the realm's feature level. */
export function streamJson(channel: ChatChannel, realm: ChatRealm): Record<string, unknown> {
  const level = realm.featureLevel;
  const fields = STREAM_FIELDS.filter(
    (field) => level >= field.since && (field.until === undefined || level < field.until),
  );
  return Object.fromEntries(fields.map((field) => [field.name, field.value(channel, realm)]));
}
