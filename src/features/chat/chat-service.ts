import { createHash } from 'node:crypto';
import type { CacheWindows } from '../../../config/load-config.js';
import type { CachedLoader, CachedRepresentation } from '../../cache/cached-loader.js';
import type { ChatCall, ChatClient, StatusUpdate } from '../../upstreams/chat/chat-client.js';
import type { ChannelFolder, Draft, User } from '../../upstreams/chat/chat-schemas.js';

export interface ChatServiceOptions {
  client: ChatClient;
  loader: CachedLoader;
  /** CHAT_BASE_URL: channel folders are one realm's, so the realm is part of the key. */
  realm: string;
  channelFoldersCache: CacheWindows;
}

export interface ChatService {
  drafts(call: ChatCall): Promise<{ count: number; drafts: Draft[] }>;
  channelFolders(call: ChatCall, includeArchived: boolean): Promise<CachedRepresentation>;
  user(
    call: ChatCall,
    email: string,
    options: { clientGravatar?: boolean; includeCustomProfileFields?: boolean },
  ): Promise<{ user: User }>;
  updateStatus(call: ChatCall, userId: number, update: StatusUpdate): Promise<void>;
  deactivateEmoji(call: ChatCall, emojiName: string): Promise<void>;
}

const KEY_VERSION = 'v1';

/** Display order (document 3): `order` ascending, ties and pre-FL-414 servers by id. */
export function sortChannelFolders(folders: readonly ChannelFolder[]): ChannelFolder[] {
  return [...folders].sort(
    (a, b) =>
      (a.order ?? Number.POSITIVE_INFINITY) - (b.order ?? Number.POSITIVE_INFINITY) || a.id - b.id,
  );
}

/** Most recently edited first (document 4.2), whatever order the server used; ties by id. */
function sortDrafts(drafts: readonly Draft[]): Draft[] {
  return [...drafts].sort((a, b) => b.timestamp - a.timestamp || b.id - a.id);
}

/**
 * The chat routes' BFF logic. Only channel folders are cached, and only because they are the
 * realm's, not the caller's; drafts and user lookups depend on who asks and are never shared.
 */
export function createChatService(options: ChatServiceOptions): ChatService {
  const { client, loader } = options;
  const realmKey = createHash('sha256').update(options.realm).digest('base64url').slice(0, 16);

  return {
    async drafts(call) {
      const { count, drafts } = await client.getDrafts(call);
      return { count, drafts: sortDrafts(drafts) };
    },
    channelFolders(call, includeArchived) {
      const key = `channel-folders:${KEY_VERSION}:${realmKey}:archived=${includeArchived}`;
      return loader.get(key, options.channelFoldersCache, async () => {
        const folders = await client.getChannelFolders(call, includeArchived);
        return {
          body: JSON.stringify({ channel_folders: sortChannelFolders(folders) }),
          contentType: 'application/json; charset=utf-8',
        };
      });
    },
    async user(call, email, lookup) {
      return { user: await client.getUserByEmail(call, email, lookup) };
    },
    updateStatus: (call, userId, update) => client.updateUserStatus(call, userId, update),
    deactivateEmoji: (call, emojiName) => client.deactivateEmoji(call, emojiName),
  };
}
