import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createChatSimulator,
  type ChatSimulator,
  type ChatSimulatorOptions,
} from '../../simulators/chat/chat-simulator.js';
import { createTestClock } from '../helpers/test-clock.js';
import {
  createZulipOpenApiValidator,
  type ZulipOpenApiValidator,
} from '../helpers/zulip-openapi.js';

/*
 * The chat simulator's real-time events against Zulip's OpenAPI (POST /register, GET /events,
 * DELETE /events): every request and answer is validated against the file, and the behaviour
 * follows its descriptions (long-poll, heartbeat, idle expiry, BAD_EVENT_QUEUE_ID).
 */

type Body = Record<string, unknown>;
let validator: ZulipOpenApiValidator;
const started: ChatSimulator[] = [];

beforeAll(async () => {
  validator = await createZulipOpenApiValidator();
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((sim) => sim.close()));
});

async function start(options: ChatSimulatorOptions = {}) {
  const sim = createChatSimulator(options);
  started.push(sim);
  await sim.listen();
  return sim;
}

async function call(
  sim: ChatSimulator,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  input: { query?: Record<string, string>; form?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { authorization: sim.authHeader('administrator') };
  const query = new URLSearchParams(input.query).toString();
  const body = input.form ? new URLSearchParams(input.form).toString() : undefined;
  if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
  expect(
    validator.validateRequest({ method, path, query, headers, ...(body ? { body } : {}) }),
  ).toEqual([]);
  const response = await fetch(`${sim.apiBase}${path}${query ? `?${query}` : ''}`, {
    method,
    headers,
    ...(body ? { body } : {}),
  });
  const answer = { status: response.status, body: (await response.json()) as Body };
  expect(validator.validateResponse(method, path, answer.status, answer.body)).toEqual([]);
  return answer;
}

const register = (sim: ChatSimulator, extra: Record<string, string> = {}) =>
  call(sim, 'POST', '/register', {
    form: {
      event_types: JSON.stringify(['channel_folder']),
      fetch_event_types: JSON.stringify(['channel_folders']),
      ...extra,
    },
  });

describe('POST /register', () => {
  it('when a client registers for channel folder events, then it gets a queue, last_event_id -1 and the folder snapshot', async () => {
    const sim = await start();
    const { status, body } = await register(sim);
    expect(status).toBe(200);
    expect(body['queue_id']).toEqual(expect.any(String));
    expect(body['last_event_id']).toBe(-1);
    expect(body['idle_queue_timeout_secs']).toBe(600);
    const snapshot = body['channel_folders'] as Body[];
    expect(snapshot.map((f) => f['id'])).toEqual(
      [...sim.realm.channelFolders].map((f) => f.id).sort((a, b) => a - b),
    );
    expect(sim.events.count()).toBe(1);
  });

  it('when fetch_event_types does not ask for channel_folders, then no snapshot comes', async () => {
    const sim = await start();
    const { body } = await register(sim, { fetch_event_types: JSON.stringify([]) });
    expect(body).not.toHaveProperty('channel_folders');
  });
});

describe('GET /events', () => {
  it('when a folder is renamed while a client long-polls, then the poll is answered with the update event', async () => {
    const sim = await start();
    const queueId = (await register(sim)).body['queue_id'] as string;
    const poll = call(sim, 'GET', '/events', { query: { queue_id: queueId, last_event_id: '-1' } });
    await sim.received((r) => r.pathname === '/api/v1/events');
    const folder = sim.realm.channelFolders[0]!;
    sim.control.updateChannelFolder(folder.id, { name: 'Renamed' });
    const { status, body } = await poll;
    expect(status).toBe(200);
    expect(body['events']).toEqual([
      {
        id: 0,
        type: 'channel_folder',
        op: 'update',
        channel_folder_id: folder.id,
        data: { name: 'Renamed' },
      },
    ]);
  });

  it('when events were acknowledged with last_event_id, then they are not sent again', async () => {
    const sim = await start();
    const queueId = (await register(sim)).body['queue_id'] as string;
    sim.control.addChannelFolder({ name: 'One' });
    sim.control.reorderChannelFolders(sim.realm.channelFolders.map((f) => f.id).reverse());
    const first = await call(sim, 'GET', '/events', {
      query: { queue_id: queueId, last_event_id: '-1', dont_block: 'true' },
    });
    expect((first.body['events'] as Body[]).map((e) => e['op'])).toEqual(['add', 'reorder']);
    const second = await call(sim, 'GET', '/events', {
      query: { queue_id: queueId, last_event_id: '1', dont_block: 'true' },
    });
    expect(second.body['events']).toEqual([]);
  });

  it('when nothing happens for the heartbeat interval, then the poll ends with a heartbeat event', async () => {
    const sim = await start({ heartbeatMs: 300 });
    const queueId = (await register(sim)).body['queue_id'] as string;
    const { body } = await call(sim, 'GET', '/events', {
      query: { queue_id: queueId, last_event_id: '-1' },
    });
    expect(body['events']).toEqual([{ type: 'heartbeat', id: 0 }]);
  });

  it('when a queue is not polled for its idle timeout, then it is collected and a poll gets BAD_EVENT_QUEUE_ID', async () => {
    const clock = createTestClock();
    const sim = await start({ eventQueueIdleMs: 300, now: clock.now });
    const queueId = (await register(sim)).body['queue_id'] as string;
    // Collection is on the simulator's clock: move it past the idle timeout.
    clock.advance(299);
    expect(sim.events.count()).toBe(1);
    clock.advance(2);
    expect(sim.events.count()).toBe(0);
    const { status, body } = await call(sim, 'GET', '/events', {
      query: { queue_id: queueId, last_event_id: '-1' },
    });
    expect(status).toBe(400);
    expect(body).toEqual({
      result: 'error',
      msg: `Bad event queue ID: ${queueId}`,
      code: 'BAD_EVENT_QUEUE_ID',
      queue_id: queueId,
    });
  });

  it('when the server loses its queues while a client polls, then the poll ends with BAD_EVENT_QUEUE_ID', async () => {
    const sim = await start();
    const queueId = (await register(sim)).body['queue_id'] as string;
    const poll = call(sim, 'GET', '/events', { query: { queue_id: queueId, last_event_id: '-1' } });
    await sim.received((r) => r.pathname === '/api/v1/events');
    sim.control.loseEventQueues();
    expect((await poll).body['code']).toBe('BAD_EVENT_QUEUE_ID');
  });

  it('when the server is older than feature level 418, then a reorder sends no event', async () => {
    const sim = await start({ featureLevel: 417 });
    const queueId = (await register(sim)).body['queue_id'] as string;
    sim.control.reorderChannelFolders(sim.realm.channelFolders.map((f) => f.id).reverse());
    const { body } = await call(sim, 'GET', '/events', {
      query: { queue_id: queueId, last_event_id: '-1', dont_block: 'true' },
    });
    expect(body['events']).toEqual([]);
  });
});

describe('DELETE /events', () => {
  it('when a client deletes its queue, then it is gone', async () => {
    const sim = await start();
    const queueId = (await register(sim)).body['queue_id'] as string;
    const { status } = await call(sim, 'DELETE', '/events', { form: { queue_id: queueId } });
    expect(status).toBe(200);
    expect(sim.events.count()).toBe(0);
    const again = await call(sim, 'DELETE', '/events', { form: { queue_id: queueId } });
    expect(again.body['code']).toBe('BAD_EVENT_QUEUE_ID');
  });
});

describe('the control interface over HTTP', () => {
  it('when a folder is renamed through /__sim/, then the realm changes and queues get the event', async () => {
    const sim = await start();
    const queueId = (await register(sim)).body['queue_id'] as string;
    const id = sim.realm.channelFolders[0]!.id;
    const res = await fetch(`${sim.origin}/__sim/channel-folders/${id}`, {
      method: 'PATCH',
      body: JSON.stringify({ name: 'Live' }),
    });
    expect(res.status).toBe(200);
    expect(sim.realm.channelFolders.find((f) => f.id === id)?.name).toBe('Live');
    const { body } = await call(sim, 'GET', '/events', {
      query: { queue_id: queueId, last_event_id: '-1', dont_block: 'true' },
    });
    expect((body['events'] as Body[])[0]).toMatchObject({ op: 'update', data: { name: 'Live' } });
  });
});
