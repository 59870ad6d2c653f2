import { createHash } from 'node:crypto';
import type { CacheWindows } from '../../../config/load-config.js';
import { toRepresentation } from '../../cache/cache-entry.js';
import type { Cached, CachedLoader, LoaderCall } from '../../cache/cached-loader.js';
import type { ChatCall, ChatClient, StatusUpdate } from '../../upstreams/chat/chat-client.js';
import type { ChannelFolder, Draft, User } from '../../upstreams/chat/chat-schemas.js';
import type { FolderCache } from './chat-events.js';

export interface ChatServiceOptions {
  client: ChatClient;
  loader: CachedLoader;
  /** CHAT_BASE_URL: channel folders are one realm's, so the realm is part of the key. */
  realm: string;
  channelFoldersCache: CacheWindows;
}

export interface ChatService {
  drafts(call: ChatCall): Promise<{ count: number; drafts: Draft[] }>;
  /** Where the realm's folder list is cached: one entry serves every caller. */
  channelFoldersKey(includeArchived: boolean): string;
  channelFolders(call: ChatCall, includeArchived: boolean, loading?: LoaderCall): Promise<Cached>;
  user(
    call: ChatCall,
    email: string,
    options: { clientGravatar?: boolean; includeCustomProfileFields?: boolean },
  ): Promise<{ user: User }>;
  updateStatus(call: ChatCall, userId: number, update: StatusUpdate): Promise<void>;
  deactivateEmoji(call: ChatCall, emojiName: string): Promise<void>;
  /** The chat events' view of the folder cache: both lists replaced from one full list. */
  readonly folderCache: FolderCache;
}

/** Bump when the cached representation changes shape, so old entries are never served. */
const KEY_VERSION = 'v3';

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
  const channelFoldersKey = (includeArchived: boolean) =>
    `channel-folders:${KEY_VERSION}:{${realmKey}}:archived=${includeArchived}`;
  const foldersRepresentation = (folders: readonly ChannelFolder[]) =>
    toRepresentation(
      { channel_folders: sortChannelFolders(folders) },
      'application/json; charset=utf-8',
    );
  /**
   * Every folder (archived ones included) makes both cached lists: the list without archived
   * folders is the same objects the server sends for include_archived=false.
   */
  const replaceFolders = async (all: readonly ChannelFolder[]) => {
    await Promise.all([
      loader.put(channelFoldersKey(true), options.channelFoldersCache, foldersRepresentation(all)),
      loader.put(
        channelFoldersKey(false),
        options.channelFoldersCache,
        foldersRepresentation(all.filter((folder) => !folder.is_archived)),
      ),
    ]);
  };

  return {
    async drafts(call) {
      const { count, drafts } = await client.getDrafts(call);
      return { count, drafts: sortDrafts(drafts) };
    },
    channelFoldersKey,
    channelFolders(call, includeArchived, loading) {
      const key = channelFoldersKey(includeArchived);
      const load = async () =>
        foldersRepresentation(await client.getChannelFolders(call, includeArchived));
      return loader.get(key, options.channelFoldersCache, load, loading);
    },
    async user(call, email, lookup) {
      return { user: await client.getUserByEmail(call, email, lookup) };
    },
    updateStatus: (call, userId, update) => client.updateUserStatus(call, userId, update),
    deactivateEmoji: (call, emojiName) => client.deactivateEmoji(call, emojiName),
    folderCache: {
      replace: replaceFolders,
      refresh: async (call) => replaceFolders(await client.getChannelFolders(call, true)),
    },
  };
}
