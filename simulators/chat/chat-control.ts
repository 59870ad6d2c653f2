import { sendJson, type RecordedRequest, type SimHandler } from '../sim-server.js';
import {
  createChannelControl,
  type ChannelControl,
  type NewChannel,
} from './chat-channel-control.js';
import type { EventQueues } from './chat-events.js';
import { folderJson } from './chat-folder-format.js';
import type { ChannelFolder } from './chat-model.js';
import type { ChatRealm } from './chat-realm.js';

/**
 * The simulator's own control interface (not Zulip's): changes the realm's channel folders as an
 * administrator would in Zulip's UI, and sends every event queue the event Zulip sends for it
 * (zulip-openapi.yaml, GET /events: channel_folder add, update, reorder). Tests call these
 * directly; the demo and manual tries use the HTTP form below /__sim/.
 *
 * Channels change too (chat-channel-control.ts), but send no `stream` events: the OpenAPI
 * extract carries none of them, so no test could check them against Zulip's document.
 */
export interface ChatControl extends ChannelControl {
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
  requests: () => readonly RecordedRequest[],
): ChatControl {
  const withOrder = () => realm.featureLevel >= 414;
  const find = (id: number) => {
    const folder = realm.channelFolders.find((candidate) => candidate.id === id);
    if (!folder) throw new Error(`no channel folder ${id}`);
    return folder;
  };
  return {
    ...createChannelControl(realm, now, requests),
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
 * `GET /__sim/requests?user_id=&path=`: `{count}` of API requests that user's credentials made,
 * to one path (`/streams`) or to any.
 */
function countRequests(control: ChatControl, url: string): { count: number } {
  const query = new URLSearchParams(url.split('?')[1] ?? '');
  const path = query.get('path') ?? undefined;
  return { count: control.requestsBy(Number(query.get('user_id')), path).length };
}

/** One HTTP control route: JSON in, a status and a JSON body (none for 204) out. */
interface ControlRoute {
  method: string;
  pattern: RegExp;
  run(
    control: ChatControl,
    input: Record<string, unknown>,
    match: RegExpExecArray,
    url: string,
  ): { status: number; body?: unknown };
}

/**
 * `POST /__sim/channel-folders` `{name, description?}`, `PATCH /__sim/channel-folders/{id}`
 * `{name?, description?, is_archived?}`, `PUT /__sim/channel-folders/order` `{order: [ids]}`,
 * `POST /__sim/event-queues/lose`, `POST /__sim/channels` (NewChannel), `PATCH
 * /__sim/channels/{id}` (ChannelChange), `GET /__sim/requests?user_id=&path=`.
 */
const CONTROL_ROUTES: readonly ControlRoute[] = [
  {
    method: 'POST',
    pattern: /^\/__sim\/channel-folders$/,
    run: (control, input) => ({
      status: 201,
      body: control.addChannelFolder(input as { name: string }),
    }),
  },
  {
    method: 'PATCH',
    pattern: /^\/__sim\/channel-folders\/(\d+)$/,
    run: (control, input, match) => ({
      status: 200,
      body: control.updateChannelFolder(Number(match[1]), input),
    }),
  },
  {
    method: 'PUT',
    pattern: /^\/__sim\/channel-folders\/order$/,
    run: (control, input) => {
      control.reorderChannelFolders(input['order'] as number[]);
      return { status: 204 };
    },
  },
  {
    method: 'POST',
    pattern: /^\/__sim\/event-queues\/lose$/,
    run: (control) => {
      control.loseEventQueues();
      return { status: 204 };
    },
  },
  {
    method: 'POST',
    pattern: /^\/__sim\/channels$/,
    run: (control, input) => ({
      status: 201,
      body: control.addChannel(input as unknown as NewChannel),
    }),
  },
  {
    method: 'PATCH',
    pattern: /^\/__sim\/channels\/(\d+)$/,
    run: (control, input, match) => ({
      status: 200,
      body: control.updateChannel(Number(match[1]), input),
    }),
  },
  {
    method: 'GET',
    pattern: /^\/__sim\/requests$/,
    run: (control, _input, _match, url) => ({ status: 200, body: countRequests(control, url) }),
  },
];

/** The control routes over HTTP: the folder or channel record, 204, or `{count}` out. */
export function createControlHandler(control: ChatControl): SimHandler {
  return (_req, res, recorded) => {
    try {
      const input =
        recorded.body === '' ? {} : (JSON.parse(recorded.body) as Record<string, unknown>);
      for (const route of CONTROL_ROUTES) {
        const match =
          route.method === recorded.method ? route.pattern.exec(recorded.pathname) : null;
        if (!match) continue;
        const { status, body } = route.run(control, input, match, recorded.url);
        if (body === undefined) return void res.writeHead(status).end();
        return sendJson(res, status, body);
      }
      return sendJson(res, 404, {
        error: `no control route ${recorded.method} ${recorded.pathname}`,
      });
    } catch (error) {
      return sendJson(res, 400, { error: String(error) });
    }
  };
}
