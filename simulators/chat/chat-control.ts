import { sendJson, type SimHandler } from '../sim-server.js';
import type { EventQueues } from './chat-events.js';
import { folderJson } from './chat-folder-format.js';
import type { ChannelFolder } from './chat-model.js';
import type { ChatRealm } from './chat-realm.js';

/**
 * The simulator's own control interface (not Zulip's): changes the realm's channel folders as an
 * administrator would in Zulip's UI, and sends every event queue the event Zulip sends for it
 * (zulip-openapi.yaml, GET /events: channel_folder add, update, reorder). Tests call these
 * directly; the demo and manual tries use the HTTP form below /__sim/.
 */
export interface ChatControl {
  addChannelFolder(input: { name: string; description?: string }): ChannelFolder;
  updateChannelFolder(
    id: number,
    data: { name?: string; description?: string; is_archived?: boolean },
  ): ChannelFolder;
  reorderChannelFolders(order: readonly number[]): void;
  /** A chat server restart: every event queue is lost (BAD_EVENT_QUEUE_ID on the next poll). */
  loseEventQueues(): void;
}

export function createChatControl(
  realm: ChatRealm,
  events: EventQueues,
  now: () => number,
): ChatControl {
  const withOrder = () => realm.featureLevel >= 414;
  const find = (id: number) => {
    const folder = realm.channelFolders.find((candidate) => candidate.id === id);
    if (!folder) throw new Error(`no channel folder ${id}`);
    return folder;
  };
  return {
    addChannelFolder({ name, description = '' }) {
      const folder: ChannelFolder = {
        id: Math.max(0, ...realm.channelFolders.map((f) => f.id)) + 1,
        name,
        order: Math.max(0, ...realm.channelFolders.map((f) => f.order)) + 1,
        dateCreated: Math.floor(now() / 1000),
        creatorId: null,
        description,
        renderedDescription: description === '' ? '' : `<p>${description}</p>`,
        isArchived: false,
      };
      realm.channelFolders = [...realm.channelFolders, folder];
      if (realm.featureLevel >= 389) {
        events.emit({
          type: 'channel_folder',
          op: 'add',
          channel_folder: folderJson(folder, withOrder()),
        });
      }
      return folder;
    },
    updateChannelFolder(id, data) {
      const old = find(id);
      const updated: ChannelFolder = {
        ...old,
        ...(data.name === undefined ? {} : { name: data.name }),
        ...(data.description === undefined
          ? {}
          : {
              description: data.description,
              renderedDescription: data.description === '' ? '' : `<p>${data.description}</p>`,
            }),
        ...(data.is_archived === undefined ? {} : { isArchived: data.is_archived }),
      };
      realm.channelFolders = realm.channelFolders.map((f) => (f.id === id ? updated : f));
      const changed: Record<string, unknown> = {};
      if (data.name !== undefined) changed['name'] = data.name;
      if (data.description !== undefined) {
        changed['description'] = data.description;
        changed['rendered_description'] = updated.renderedDescription;
      }
      if (data.is_archived !== undefined) changed['is_archived'] = data.is_archived;
      if (realm.featureLevel >= 389) {
        events.emit({ type: 'channel_folder', op: 'update', channel_folder_id: id, data: changed });
      }
      return updated;
    },
    reorderChannelFolders(order) {
      const position = new Map(order.map((id, index) => [id, index + 1]));
      realm.channelFolders = realm.channelFolders.map((f) => ({
        ...f,
        order: position.get(f.id) ?? f.order,
      }));
      // Reorder events exist from feature level 418; older servers send nothing.
      if (realm.featureLevel >= 418) {
        events.emit({ type: 'channel_folder', op: 'reorder', order: [...order] });
      }
    },
    loseEventQueues: () => events.loseAll(),
  };
}

/**
 * `POST /__sim/channel-folders` `{name, description?}`, `PATCH /__sim/channel-folders/{id}`
 * `{name?, description?, is_archived?}`, `PUT /__sim/channel-folders/order` `{order: [ids]}`,
 * `POST /__sim/event-queues/lose`. JSON in, the folder (or 204) out.
 */
export function createControlHandler(control: ChatControl): SimHandler {
  return (_req, res, recorded) => {
    const path = recorded.pathname;
    const method = recorded.method;
    let input: Record<string, unknown> = {};
    try {
      if (recorded.body !== '') input = JSON.parse(recorded.body) as Record<string, unknown>;
      if (method === 'POST' && path === '/__sim/channel-folders') {
        return sendJson(res, 201, control.addChannelFolder(input as { name: string }));
      }
      const one = /^\/__sim\/channel-folders\/(\d+)$/.exec(path);
      if (method === 'PATCH' && one) {
        return sendJson(res, 200, control.updateChannelFolder(Number(one[1]), input));
      }
      if (method === 'PUT' && path === '/__sim/channel-folders/order') {
        control.reorderChannelFolders(input['order'] as number[]);
        res.writeHead(204).end();
        return;
      }
      if (method === 'POST' && path === '/__sim/event-queues/lose') {
        control.loseEventQueues();
        res.writeHead(204).end();
        return;
      }
      return sendJson(res, 404, { error: `no control route ${method} ${path}` });
    } catch (error) {
      return sendJson(res, 400, { error: String(error) });
    }
  };
}
