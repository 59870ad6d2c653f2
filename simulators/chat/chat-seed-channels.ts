import type { ChatChannel } from './chat-model.js';

type ChannelSeed = Pick<ChatChannel, 'id' | 'name' | 'subscriberIds'> & Partial<ChatChannel>;

/** A public, active, non-default channel with an empty description, unless the seed says more. */
function channel(seed: ChannelSeed): ChatChannel {
  const description = seed.description ?? '';
  return {
    description,
    renderedDescription: description === '' ? '' : `<p>${description}</p>`,
    dateCreated: 1_691_057_093,
    creatorId: 1,
    inviteOnly: false,
    isWebPublic: false,
    historyPublicToSubscribers: !(seed.inviteOnly ?? false),
    messageRetentionDays: null,
    defaultPushNotifications: false,
    firstMessageId: null,
    folderId: null,
    isArchived: false,
    isRecentlyActive: true,
    weeklyTraffic: null,
    adminsOnlyPosting: false,
    isDefault: false,
    ...seed,
  };
}

/** A private channel whose only subscriber is the user who made it. */
function ownPrivate(id: number, name: string, userId: number): ChatChannel {
  return channel({
    id,
    name,
    subscriberIds: [userId],
    inviteOnly: true,
    creatorId: userId,
    description: `Private notes of user ${userId}`,
    dateCreated: 1_700_000_000 + id * 86_400,
  });
}

/** Everyone active at creation time, bots included (Zulip subscribes them to default channels). */
const EVERYONE = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];

/** Public channels (one web-public, one archived) of several sizes and ages. */
function sharedChannels(): ChatChannel[] {
  return [
    channel({
      id: 1,
      name: 'general',
      subscriberIds: EVERYONE,
      creatorId: null,
      description: 'Everything **else**',
      renderedDescription: '<p>Everything <strong>else</strong></p>',
      firstMessageId: 1,
      weeklyTraffic: 120,
      isDefault: true,
    }),
    channel({
      id: 2,
      name: 'Design',
      subscriberIds: [1, 2, 4],
      description: 'Mock-ups & reviews',
      renderedDescription: '<p>Mock-ups &amp; reviews</p>',
      folderId: 2,
      firstMessageId: 14,
      weeklyTraffic: 8,
    }),
    channel({
      id: 3,
      name: 'announce',
      subscriberIds: EVERYONE,
      description: 'Company news',
      adminsOnlyPosting: true,
      isDefault: true,
      defaultPushNotifications: true,
      messageRetentionDays: -1,
      folderId: 4,
      firstMessageId: 3,
      weeklyTraffic: 2,
    }),
    channel({ id: 4, name: 'Zebra', subscriberIds: [3], creatorId: 3, isRecentlyActive: false }),
    channel({
      id: 5,
      name: 'design-review',
      subscriberIds: [2, 7],
      creatorId: 2,
      folderId: 2,
      firstMessageId: 40,
      weeklyTraffic: 0,
    }),
    channel({
      id: 6,
      name: 'showcase',
      subscriberIds: [1, 4],
      description: 'Open to the web',
      isWebPublic: true,
      messageRetentionDays: 30,
      folderId: 4,
      firstMessageId: 22,
      weeklyTraffic: 5,
    }),
    channel({
      id: 8,
      name: 'legacy-support',
      subscriberIds: [1, 4, 7],
      description: 'Archived after the 2023 migration',
      isArchived: true,
      isRecentlyActive: false,
      folderId: 3,
      firstMessageId: 2,
      weeklyTraffic: 0,
    }),
  ];
}

/** One private channel for each active human, and one shared by three users. */
function privateChannels(): ChatChannel[] {
  return [
    channel({ ...ownPrivate(7, 'marie-lab', 4), folderId: 1, firstMessageId: 51 }),
    ownPrivate(9, 'ada-board', 1),
    ownPrivate(10, 'grace-ops', 2),
    ownPrivate(11, 'moe-moderation', 3),
    ownPrivate(12, 'gus-visitors', 5),
    ownPrivate(13, 'hal-hideout', 6),
    ownPrivate(14, 'priya-research', 7),
    channel({
      id: 15,
      name: 'Leadership',
      subscriberIds: [1, 2, 8],
      inviteOnly: true,
      historyPublicToSubscribers: true,
      description: 'Owners and administrators',
      firstMessageId: 60,
    }),
  ];
}

/**
 * The realm's channels. Names mix cases so that Zulip's code-point order ("Design", "Zebra",
 * "announce", …) differs from a case-insensitive one. Ids do not follow names. Every active
 * human has a private channel only they are subscribed to (`ada-board` … `priya-research`),
 * so a test can show one user never sees another's; `Leadership` is shared by the owner, the
 * administrator and the deactivated Dora, who does not count in `subscriber_count`.
 * Drafts (chat-seed-content.ts) point at channels 1, 3 and 7.
 */
export function seedChannels(): ChatChannel[] {
  return [...sharedChannels(), ...privateChannels()].sort((a, b) => a.id - b.id);
}
