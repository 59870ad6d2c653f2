import {
  EMAIL_VISIBILITY,
  ROLE_BY_NAME,
  type ChannelFolder,
  type ChatChannel,
  type ChatCredentials,
  type ChatDraft,
  type ChatRoleName,
  type ChatUser,
  type CustomEmoji,
  type CustomProfileField,
  type EmailVisibility,
  type UserStatus,
} from './chat-model.js';
import { seedChannels } from './chat-seed-channels.js';
import { seedChannelFolders, seedCustomEmoji, seedDrafts } from './chat-seed-content.js';
import { CUSTOM_PROFILE_FIELDS, seedUsers } from './chat-seed-users.js';

/** Whose credentials a test wants: a human of a role, any active bot, or a deactivated user. */
export type CredentialKind = ChatRoleName | 'bot' | 'deactivated';

/** The deterministic organization and its mutable state (emoji deactivation, statuses). */
export interface ChatRealm {
  readonly host: string;
  featureLevel: number;
  readonly users: readonly ChatUser[];
  readonly customProfileFields: readonly CustomProfileField[];
  readonly drafts: readonly ChatDraft[];
  readonly customEmoji: readonly CustomEmoji[];
  /** Replaced as a whole by the control interface (chat-control.ts). */
  channelFolders: readonly ChannelFolder[];
  /** The channels (Zulip: streams); replaced as a whole by the control interface too. */
  channels: readonly ChatChannel[];
  /** Statuses set through POST /users/{user_id}/status, by user id. */
  readonly statuses: Map<number, UserStatus>;
  userById(id: number): ChatUser | undefined;
  /** The API `email`: the real address only for visibility `everyone`, else the dummy. */
  apiEmail(user: ChatUser): string;
  /** `user{id}@{realm host}`, Zulip's API-usable stand-in for a hidden address. */
  dummyEmail(userId: number): string;
  /** Whether `viewer` may see `target`'s real address (Zulip's can_access_delivery_email). */
  canSeeDeliveryEmail(viewer: ChatUser, target: ChatUser): boolean;
  /** Visibility values whose real addresses a viewer's role may look up (by role only). */
  visibleByRole(viewer: ChatUser): readonly EmailVisibility[];
  credentials(kind: CredentialKind): ChatCredentials;
}

/**
 * Zulip's UserProfile.ROLE_TO_ACCESSIBLE_EMAIL_ADDRESS_VISIBILITY_IDS: which visibility settings
 * let a requester of each role see a real address. `nobody` is seen by no one but the user.
 */
const VISIBILITY_BY_ROLE: Readonly<Record<ChatUser['role'], readonly EmailVisibility[]>> = {
  100: [
    EMAIL_VISIBILITY.everyone,
    EMAIL_VISIBILITY.members,
    EMAIL_VISIBILITY.moderators,
    EMAIL_VISIBILITY.admins,
  ],
  200: [
    EMAIL_VISIBILITY.everyone,
    EMAIL_VISIBILITY.members,
    EMAIL_VISIBILITY.moderators,
    EMAIL_VISIBILITY.admins,
  ],
  300: [EMAIL_VISIBILITY.everyone, EMAIL_VISIBILITY.members, EMAIL_VISIBILITY.moderators],
  400: [EMAIL_VISIBILITY.everyone, EMAIL_VISIBILITY.members],
  600: [EMAIL_VISIBILITY.everyone],
};

export function createChatRealm(options: { host: string; featureLevel: number }): ChatRealm {
  const users = seedUsers(options.host);
  const byId = new Map(users.map((user) => [user.id, user]));

  const realm: ChatRealm = {
    host: options.host,
    featureLevel: options.featureLevel,
    users,
    customProfileFields: CUSTOM_PROFILE_FIELDS,
    drafts: seedDrafts(),
    customEmoji: seedCustomEmoji(),
    channelFolders: seedChannelFolders(),
    channels: seedChannels(),
    statuses: new Map(),
    userById: (id) => byId.get(id),
    dummyEmail: (userId) => `user${userId}@${options.host}`,
    apiEmail(user) {
      return user.emailVisibility === EMAIL_VISIBILITY.everyone
        ? user.deliveryEmail
        : realm.dummyEmail(user.id);
    },
    visibleByRole: (viewer) => VISIBILITY_BY_ROLE[viewer.role],
    canSeeDeliveryEmail(viewer, target) {
      return (
        viewer.id === target.id || realm.visibleByRole(viewer).includes(target.emailVisibility)
      );
    },
    credentials(kind) {
      const user = users.find((candidate) => matchesKind(candidate, kind));
      if (!user) throw new Error(`the seeded realm has no user of kind ${kind}`);
      return {
        userId: user.id,
        email: user.deliveryEmail,
        apiKey: user.apiKey,
        password: user.password,
      };
    },
  };
  return realm;
}

function matchesKind(user: ChatUser, kind: CredentialKind): boolean {
  if (kind === 'deactivated') return !user.isActive && user.botType === null;
  if (kind === 'bot') return user.isActive && user.botType !== null;
  return user.isActive && user.botType === null && user.role === ROLE_BY_NAME[kind];
}
