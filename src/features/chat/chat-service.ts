import { toRepresentation, type Representation } from '../../cache/cache-entry.js';
import type { Cached, CachedLoader, LoaderCall } from '../../cache/cached-loader.js';
import type { CachedEntry } from '../../http/route-mounter.js';
import type { ChatCall, ChatClient } from '../../upstreams/chat/chat-client.js';
import type { ChannelFolder, Draft } from '../../upstreams/chat/chat-schemas.js';
import type { ROUTES } from '../route-table.js';
import type { FolderCache } from './chat-events.js';

export interface ChatServiceOptions {
  client: ChatClient;
  loader: CachedLoader;
  /** The folder route's entry (route table): the first screen and the events share it. */
  folders: CachedEntry<typeof ROUTES.listChannelFolders>;
}

export interface ChatService {
  readonly client: ChatClient;
  drafts(call: ChatCall): Promise<{ count: number; drafts: Draft[] }>;
  /** Where the realm's folder list is cached: one entry serves every caller. */
  channelFoldersKey(includeArchived: boolean): string;
  /** The chat server's folder list as it is stored and sent: what a miss of the route loads. */
  loadFolders(call: ChatCall, includeArchived: boolean): Promise<Representation>;
  /** The folder list as its route answers it, for work outside that route (bootstrap, events). */
  channelFolders(call: ChatCall, includeArchived: boolean, loading?: LoaderCall): Promise<Cached>;
  /** The chat events' view of the folder cache: both lists replaced from one full list. */
  readonly folderCache: FolderCache;
}

/** Display order (document 3): `order` ascending, ties and pre-FL-414 servers by id. */
export function sortChannelFolders(folders: readonly ChannelFolder[]): ChannelFolder[] {
  return [...folders].sort(
    (a, b) =>
      (a.order ?? Number.POSITIVE_INFINITY) - (b.order ?? Number.POSITIVE_INFINITY) || a.id - b.id,
  );
}

/** The folder list as stored and sent. */
const foldersRepresentation = (folders: readonly ChannelFolder[]): Representation =>
  toRepresentation(
    { channel_folders: sortChannelFolders(folders) },
    'application/json; charset=utf-8',
  );

/** Most recently edited first (document 4.2), whatever order the server used; ties by id. */
function sortDrafts(drafts: readonly Draft[]): Draft[] {
  return [...drafts].sort((a, b) => b.timestamp - a.timestamp || b.id - a.id);
}

/**
 * What the chat routes share with the first screen and the events: drafts in display order,
 * and the folder entry, read and replaced with the key and windows of its route.
 */
export function createChatService(options: ChatServiceOptions): ChatService {
  const { client, loader, folders } = options;
  const channelFoldersKey = (includeArchived: boolean) =>
    folders.key({
      path: undefined,
      query: { include_archived: includeArchived },
      body: undefined,
      accept: undefined,
    });
  /**
   * Every folder (archived ones included) makes both cached lists: the list without archived
   * folders is the same objects the server sends for include_archived=false.
   */
  const replaceFolders = async (all: readonly ChannelFolder[]) => {
    await Promise.all([
      loader.put(channelFoldersKey(true), folders.windows, foldersRepresentation(all)),
      loader.put(
        channelFoldersKey(false),
        folders.windows,
        foldersRepresentation(all.filter((folder) => !folder.is_archived)),
      ),
    ]);
  };

  const loadFolders = async (call: ChatCall, includeArchived: boolean) =>
    foldersRepresentation(await client.getChannelFolders(call, includeArchived));

  return {
    client,
    loadFolders,
    async drafts(call) {
      const { count, drafts } = await client.getDrafts(call);
      return { count, drafts: sortDrafts(drafts) };
    },
    channelFoldersKey,
    channelFolders(call, includeArchived, loading) {
      const load = () => loadFolders(call, includeArchived);
      return loader.get(channelFoldersKey(includeArchived), folders.windows, load, loading);
    },
    folderCache: {
      replace: replaceFolders,
      refresh: async (call) => replaceFolders(await client.getChannelFolders(call, true)),
    },
  };
}
