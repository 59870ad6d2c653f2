import { ChatApiError, badRequest } from './chat-errors.js';
import { folderJson } from './chat-folder-format.js';
import type { ChatRoute } from './chat-route.js';

/** Chat document 4.2: the caller's drafts, most recently edited first. */
const getDrafts: ChatRoute = {
  method: 'GET',
  pattern: /^\/drafts$/,
  authenticated: true,
  handle({ realm, user }) {
    const drafts = realm.drafts
      .filter((draft) => draft.userId === user.id)
      .sort((a, b) => b.timestamp - a.timestamp || b.id - a.id)
      .map(({ id, type, to, topic, content, timestamp }) => ({
        id,
        type,
        to: [...to],
        topic,
        content,
        timestamp,
      }));
    return { count: drafts.length, drafts };
  },
};

/**
 * Chat document 4.4: new at feature level 389; sorted by `order` (ties by id) from 414, when
 * the field appeared, and by id before.
 */
const getChannelFolders: ChatRoute = {
  method: 'GET',
  pattern: /^\/channel_folders$/,
  minFeatureLevel: 389,
  authenticated: true,
  handle({ realm, params }) {
    const includeArchived = params.takeJsonBool('include_archived', false);
    const withOrder = realm.featureLevel >= 414;
    const folders = realm.channelFolders
      .filter((folder) => includeArchived || !folder.isArchived)
      .sort((a, b) => (withOrder ? a.order - b.order : 0) || a.id - b.id)
      .map((folder) => folderJson(folder, withOrder));
    return { channel_folders: folders };
  },
};

/**
 * Chat document 4.3 / 7.3: a missing (or already deactivated) emoji is checked before the
 * permission; 404 from feature level 190, 400 before. The permission message is Zulip's
 * (check_remove_custom_emoji); neither document spells it out.
 */
const deactivateCustomEmoji: ChatRoute = {
  method: 'DELETE',
  pattern: /^\/realm\/emoji\/(.+)$/,
  authenticated: true,
  handle({ realm, path, user }) {
    const name = path[0] ?? '';
    const emoji = realm.customEmoji.find(
      (candidate) => candidate.name === name && !candidate.deactivated,
    );
    if (!emoji) {
      const status = realm.featureLevel >= 190 ? 404 : 400;
      throw new ChatApiError(status, 'BAD_REQUEST', `Emoji '${name}' does not exist`);
    }
    const isAdmin = user.role <= 200;
    if (!isAdmin && emoji.authorId !== user.id) {
      throw badRequest('Must be an organization administrator or emoji author');
    }
    emoji.deactivated = true;
    return {};
  },
};

export const CONTENT_ROUTES: readonly ChatRoute[] = [
  getDrafts,
  getChannelFolders,
  deactivateCustomEmoji,
];
