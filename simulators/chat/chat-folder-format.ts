import type { ChannelFolder } from './chat-model.js';

/**
 * A folder as the API shows it: GET /channel_folders, the register snapshot and `add` events;
 * `order` only from feature level 414, where it appeared.
 */
export function folderJson(folder: ChannelFolder, withOrder: boolean): Record<string, unknown> {
  return {
    id: folder.id,
    name: folder.name,
    ...(withOrder ? { order: folder.order } : {}),
    date_created: folder.dateCreated,
    creator_id: folder.creatorId,
    description: folder.description,
    rendered_description: folder.renderedDescription,
    is_archived: folder.isArchived,
  };
}
