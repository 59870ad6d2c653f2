import type { RecordedRequest } from '../sim-server.js';
import type { ChatChannel, ChatUser } from './chat-model.js';
import type { ChatRealm } from './chat-realm.js';

/** A channel to add; snake_case like the HTTP form below /__sim/. */
export interface NewChannel {
  name: string;
  description?: string;
  /** A private channel: only its subscribers (and, with include_all, administrators) see it. */
  invite_only?: boolean;
  is_web_public?: boolean;
  /** User ids. */
  subscribers?: readonly number[];
  /** Defaults to the first subscriber, or null without subscribers. */
  creator_id?: number | null;
  folder_id?: number | null;
  is_default?: boolean;
}

export interface ChannelChange {
  name?: string;
  description?: string;
  is_archived?: boolean;
  invite_only?: boolean;
  /** Replaces the subscriber list. */
  subscribers?: readonly number[];
}

/** The channel half of the control interface (chat-control.ts). */
export interface ChannelControl {
  addChannel(input: NewChannel): ChatChannel;
  updateChannel(id: number, change: ChannelChange): ChatChannel;
  /**
   * The recorded API requests that carried this user's Basic credentials (whatever the
   * answer), optionally only those for one path: `/streams` or `/api/v1/streams`.
   */
  requestsBy(userId: number, path?: string): RecordedRequest[];
}

const rendered = (description: string): string =>
  description === '' ? '' : `<p>${description}</p>`;

/** Whether a recorded request carried this user's Basic credentials. */
function sentBy(request: RecordedRequest, user: ChatUser): boolean {
  const header = request.headers.authorization;
  const [scheme = '', encoded = ''] = (header ?? '').trim().split(/\s+/);
  if (scheme.toLowerCase() !== 'basic') return false;
  const parts = Buffer.from(encoded, 'base64').toString('utf8').split(':');
  if (parts.length !== 2) return false;
  const [email = '', apiKey = ''] = parts;
  return (
    apiKey.trim() === user.apiKey && email.trim().toLowerCase() === user.deliveryEmail.toLowerCase()
  );
}

function requestsBy(
  realm: ChatRealm,
  requests: readonly RecordedRequest[],
  userId: number,
  path: string | undefined,
): RecordedRequest[] {
  const user = realm.userById(userId);
  if (!user) throw new Error(`no user ${userId}`);
  const pathname = path === undefined || path.startsWith('/api/v1/') ? path : `/api/v1${path}`;
  return requests.filter(
    (request) =>
      request.pathname.startsWith('/api/v1/') &&
      (pathname === undefined || request.pathname === pathname) &&
      sentBy(request, user),
  );
}

/** A channel as the control adds it: active, recently created, Zulip's defaults elsewhere. */
function newChannel(id: number, input: NewChannel, createdAt: number): ChatChannel {
  const subscribers = input.subscribers ?? [];
  const inviteOnly = input.invite_only ?? false;
  const description = input.description ?? '';
  return {
    id,
    name: input.name,
    description,
    renderedDescription: rendered(description),
    dateCreated: createdAt,
    creatorId: input.creator_id === undefined ? (subscribers[0] ?? null) : input.creator_id,
    inviteOnly,
    isWebPublic: input.is_web_public ?? false,
    historyPublicToSubscribers: !inviteOnly,
    messageRetentionDays: null,
    defaultPushNotifications: false,
    firstMessageId: null,
    folderId: input.folder_id ?? null,
    isArchived: false,
    isRecentlyActive: true,
    // Zulip has no estimate for a channel this young.
    weeklyTraffic: null,
    adminsOnlyPosting: false,
    isDefault: input.is_default ?? false,
    subscriberIds: [...subscribers],
  };
}

export function createChannelControl(
  realm: ChatRealm,
  now: () => number,
  requests: () => readonly RecordedRequest[],
): ChannelControl {
  const find = (id: number): ChatChannel => {
    const channel = realm.channels.find((candidate) => candidate.id === id);
    if (!channel) throw new Error(`no channel ${id}`);
    return channel;
  };
  // Zulip refuses a name already in use, compared case-insensitively.
  const assertFreeName = (name: string, exceptId?: number): void => {
    if (name.trim() === '') throw new Error('a channel name must not be empty');
    const taken = realm.channels.some(
      (c) => c.id !== exceptId && c.name.toLowerCase() === name.toLowerCase(),
    );
    if (taken) throw new Error(`channel name ${JSON.stringify(name)} is already in use`);
  };
  const assertUsers = (ids: readonly number[]): void => {
    const unknown = ids.filter((id) => realm.userById(id) === undefined);
    if (unknown.length > 0) throw new Error(`no users ${unknown.join(', ')}`);
  };

  return {
    addChannel(input) {
      assertFreeName(input.name);
      assertUsers(input.subscribers ?? []);
      const id = Math.max(0, ...realm.channels.map((c) => c.id)) + 1;
      const channel = newChannel(id, input, Math.floor(now() / 1000));
      realm.channels = [...realm.channels, channel];
      return channel;
    },
    updateChannel(id, change) {
      const old = find(id);
      if (change.name !== undefined) assertFreeName(change.name, id);
      if (change.subscribers !== undefined) assertUsers(change.subscribers);
      const updated: ChatChannel = {
        ...old,
        ...(change.name === undefined ? {} : { name: change.name }),
        ...(change.description === undefined
          ? {}
          : { description: change.description, renderedDescription: rendered(change.description) }),
        ...(change.is_archived === undefined ? {} : { isArchived: change.is_archived }),
        // Zulip keeps a public channel's history public to its subscribers.
        ...(change.invite_only === undefined
          ? {}
          : {
              inviteOnly: change.invite_only,
              historyPublicToSubscribers: change.invite_only
                ? old.historyPublicToSubscribers
                : true,
            }),
        ...(change.subscribers === undefined ? {} : { subscriberIds: [...change.subscribers] }),
      };
      realm.channels = realm.channels.map((c) => (c.id === id ? updated : c));
      return updated;
    },
    requestsBy: (userId, path) => requestsBy(realm, requests(), userId, path),
  };
}
