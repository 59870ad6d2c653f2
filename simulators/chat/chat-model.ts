/** The records of the simulated organization (realm), in the chat document's vocabulary. */

/** Chat document 2.4: 100 owner, 200 administrator, 300 moderator, 400 member, 600 guest. */
export type ChatRole = 100 | 200 | 300 | 400 | 600;

export type ChatRoleName = 'owner' | 'administrator' | 'moderator' | 'member' | 'guest';

export const ROLE_BY_NAME: Readonly<Record<ChatRoleName, ChatRole>> = {
  owner: 100,
  administrator: 200,
  moderator: 300,
  member: 400,
  guest: 600,
};

/** Chat document 2.4: 1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded. */
export type BotType = 1 | 2 | 3 | 4;

/** Zulip's per-user `email_address_visibility` values (UserProfile.EMAIL_ADDRESS_VISIBILITY_*). */
export const EMAIL_VISIBILITY = {
  everyone: 1,
  members: 2,
  admins: 3,
  nobody: 4,
  moderators: 5,
} as const;

export type EmailVisibility = (typeof EMAIL_VISIBILITY)[keyof typeof EMAIL_VISIBILITY];

/** One custom profile field value; `renderedValue` only for Markdown-capable field types. */
export interface ProfileValue {
  readonly value: string;
  readonly renderedValue?: string;
}

export interface ChatUser {
  readonly id: number;
  readonly fullName: string;
  /** The real address (`delivery_email`); the Basic-auth username and fetch_api_key username. */
  readonly deliveryEmail: string;
  /** Null for bots: they have no usable password, only an API key. */
  readonly password: string | null;
  /** 32 alphanumeric characters, the Basic-auth password. */
  readonly apiKey: string;
  readonly role: ChatRole;
  isActive: boolean;
  readonly botType: BotType | null;
  /** The owner's id for bots; null for legacy bots without an owner and for humans. */
  readonly botOwnerId: number | null;
  /** Bots always have `everyone` (chat document 2.4). */
  readonly emailVisibility: EmailVisibility;
  readonly timezone: string;
  /** ISO 8601, minute precision as Zulip sends it. */
  readonly dateJoined: string;
  readonly avatarSource: 'gravatar' | 'upload';
  readonly avatarVersion: number;
  /** Custom profile field id → value; humans only. */
  readonly profileData: Readonly<Record<number, ProfileValue>>;
}

/** Zulip's custom profile field types; 1 short text and 2 long text support Markdown. */
export interface CustomProfileField {
  readonly id: number;
  readonly name: string;
  readonly type: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;
}

/** Chat document 2.2. `userId` is the draft's owner, never sent. */
export interface ChatDraft {
  readonly id: number;
  readonly userId: number;
  readonly type: '' | 'stream' | 'private';
  readonly to: readonly number[];
  readonly topic: string;
  readonly content: string;
  readonly timestamp: number;
}

/** Chat document 2.6; the id is the `emoji_code` of reaction type `realm_emoji`. */
export interface CustomEmoji {
  readonly id: number;
  readonly name: string;
  /** Null for emoji whose author is unknown (only administrators can deactivate those). */
  readonly authorId: number | null;
  deactivated: boolean;
}

/** Chat document 2.3. */
export interface ChannelFolder {
  readonly id: number;
  readonly name: string;
  readonly order: number;
  readonly dateCreated: number | null;
  readonly creatorId: number | null;
  readonly description: string;
  readonly renderedDescription: string;
  readonly isArchived: boolean;
}

/**
 * A channel (Zulip: stream) as GET /streams reads it. `subscriberIds` may name deactivated
 * users: they stay subscribed, but `subscriber_count` counts active users only.
 */
export interface ChatChannel {
  readonly id: number;
  readonly name: string;
  readonly description: string;
  readonly renderedDescription: string;
  readonly dateCreated: number;
  /** Null for channels made at realm creation or by an import. */
  readonly creatorId: number | null;
  readonly inviteOnly: boolean;
  readonly isWebPublic: boolean;
  readonly historyPublicToSubscribers: boolean;
  /** Null inherits the realm's policy; -1 keeps messages forever. */
  readonly messageRetentionDays: number | null;
  readonly defaultPushNotifications: boolean;
  /** Null for a channel without messages. */
  readonly firstMessageId: number | null;
  readonly folderId: number | null;
  readonly isArchived: boolean;
  readonly isRecentlyActive: boolean;
  /** Null when the server has too little history to estimate it. */
  readonly weeklyTraffic: number | null;
  /** Only administrators may post (stream_post_policy 2, can_send_message_group admins). */
  readonly adminsOnlyPosting: boolean;
  /** A default channel of the realm (`is_default` with include_default). */
  readonly isDefault: boolean;
  readonly subscriberIds: readonly number[];
}

/** The stored status record (chat document 2.5 input shape). */
export interface UserStatus {
  statusText: string;
  emojiName: string;
  emojiCode: string;
  reactionType: string;
}

export interface ChatCredentials {
  readonly userId: number;
  /** The Basic-auth username: the user's real email address. */
  readonly email: string;
  readonly apiKey: string;
  /** For POST /fetch_api_key; null for bots. */
  readonly password: string | null;
}
