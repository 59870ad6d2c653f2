import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createChatSimulator,
  type ChatSimulator,
  type CredentialKind,
} from '../../simulators/chat/chat-simulator.js';
import {
  createZulipOpenApiValidator,
  type ZulipOpenApiValidator,
} from '../helpers/zulip-openapi.js';

type Body = Record<string, unknown>;
type Stream = Body & { name: string; stream_id: number };

interface Answer {
  status: number;
  body: Body;
  streams: Stream[];
}

let validator: ZulipOpenApiValidator;
let sim: ChatSimulator;

/**
 * GET /streams as a seeded user. The request is checked against Zulip's document unless it is
 * off-spec on purpose; the answer always is, and must match it at the newest feature level
 * (older levels lack fields the document requires: those tests say which).
 */
async function listStreams(
  as: CredentialKind,
  query: Record<string, string> = {},
  options: { offSpec?: boolean } = {},
): Promise<Answer & { errors: string[] }> {
  const headers = { authorization: sim.authHeader(as) };
  const search = new URLSearchParams(query).toString();
  if (!options.offSpec) {
    expect(
      validator.validateRequest({ method: 'GET', path: '/streams', query: search, headers }),
    ).toEqual([]);
  }
  const response = await fetch(`${sim.apiBase}/streams${search ? `?${search}` : ''}`, { headers });
  expect(response.headers.get('content-type')).toBe('application/json');
  const body = (await response.json()) as Body;
  const errors = validator.validateResponse('GET', '/streams', response.status, body);
  return { status: response.status, body, streams: (body.streams ?? []) as Stream[], errors };
}

/** listStreams at a level where the answer must match the document exactly. */
async function valid(
  as: CredentialKind,
  query: Record<string, string> = {},
  options: { offSpec?: boolean } = {},
): Promise<Answer> {
  const answer = await listStreams(as, query, options);
  expect(answer.errors).toEqual([]);
  return answer;
}

const names = (answer: Answer): string[] => answer.streams.map((stream) => stream.name);

/** The private channel each seeded human has to themself (chat-seed-channels.ts). */
const OWN_PRIVATE: Readonly<Record<Exclude<CredentialKind, 'bot' | 'deactivated'>, string>> = {
  owner: 'ada-board',
  administrator: 'grace-ops',
  moderator: 'moe-moderation',
  member: 'marie-lab',
  guest: 'gus-visitors',
};
const PRIVATE_OF_OTHERS = ['hal-hideout', 'priya-research'];

beforeAll(async () => {
  validator = await createZulipOpenApiValidator();
});

beforeEach(async () => {
  sim = createChatSimulator();
  await sim.listen();
});

afterEach(async () => {
  await sim.close();
});

describe('chat simulator: GET /streams', () => {
  it('when a member lists channels with the defaults, then public active ones and their own private one come, by code point', async () => {
    const answer = await valid('member');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ result: 'success', msg: '' });
    expect(answer.body).not.toHaveProperty('ignored_parameters_unsupported');
    // Zulip sorts by name as Python compares strings: upper case before lower case.
    expect(names(answer)).toEqual([
      'Design',
      'Zebra',
      'announce',
      'design-review',
      'general',
      'marie-lab',
      'showcase',
    ]);
    for (const stream of answer.streams) expect(stream).not.toHaveProperty('is_default');
  });

  it('when each role lists channels with any parameters, then it sees its own private channel and never another user’s', async () => {
    const combinations: Record<string, string>[] = [
      {},
      { include_web_public: 'true' },
      { exclude_archived: 'false' },
      { include_public: 'false' },
      { include_can_access_content: 'true' },
      { include_default: 'true', include_owner_subscribed: 'true' },
    ];
    for (const [kind, own] of Object.entries(OWN_PRIVATE) as [CredentialKind, string][]) {
      const others = [
        ...Object.values(OWN_PRIVATE).filter((name) => name !== own),
        ...PRIVATE_OF_OTHERS,
      ];
      for (const query of combinations) {
        const seen = names(await valid(kind, query));
        expect(seen, `${kind} ${JSON.stringify(query)}`).toContain(own);
        for (const name of others)
          expect(seen, `${kind} ${JSON.stringify(query)}`).not.toContain(name);
      }
    }
  });

  it('when a member or moderator asks for include_all, then still no private channel of another user', async () => {
    const member = names(await valid('member', { include_all: 'true', exclude_archived: 'false' }));
    expect(member).toContain('marie-lab');
    expect(member).toContain('legacy-support');
    expect(member).not.toContain('moe-moderation');
    expect(member).not.toContain('Leadership');
    const moderator = names(await valid('moderator', { include_all: 'true' }));
    expect(moderator).toContain('moe-moderation');
    expect(moderator).not.toContain('marie-lab');
  });

  it('when an administrator asks for include_all, then every channel comes, private ones too (metadata access)', async () => {
    const plain = names(await valid('administrator'));
    expect(plain).toContain('grace-ops');
    expect(plain).not.toContain('marie-lab');

    const all = await valid('administrator', { include_all: 'true', exclude_archived: 'false' });
    expect(names(all)).toEqual([
      'Design',
      'Leadership',
      'Zebra',
      'ada-board',
      'announce',
      'design-review',
      'general',
      'grace-ops',
      'gus-visitors',
      'hal-hideout',
      'legacy-support',
      'marie-lab',
      'moe-moderation',
      'priya-research',
      'showcase',
    ]);
    // Content access is not metadata access: the administrator is in no group granting it.
    const content = names(await valid('administrator', { include_can_access_content: 'true' }));
    expect(content).not.toContain('marie-lab');
  });

  it('when the sources are switched off one by one, then the answer is their union', async () => {
    const subscribedOnly = await valid('member', { include_public: 'false' });
    expect(names(subscribedOnly)).toEqual([
      'Design',
      'announce',
      'general',
      'marie-lab',
      'showcase',
    ]);

    const nothing = await valid('member', { include_public: 'false', include_subscribed: 'false' });
    expect(nothing.streams).toEqual([]);

    const webPublic = await valid('member', {
      include_public: 'false',
      include_subscribed: 'false',
      include_web_public: 'true',
    });
    expect(names(webPublic)).toEqual(['showcase']);
    expect(webPublic.streams[0]).toMatchObject({ is_web_public: true, invite_only: false });
  });

  it('when exclude_archived is false, then the archived channel comes with is_archived true', async () => {
    const answer = await valid('member', { exclude_archived: 'false' });
    const archived = answer.streams.filter((stream) => stream.is_archived);
    expect(archived.map((stream) => stream.name)).toEqual(['legacy-support']);
    expect(names(await valid('member'))).not.toContain('legacy-support');
  });

  it('when include_default is true, then every channel carries is_default', async () => {
    const answer = await valid('member', { include_default: 'true' });
    const defaults = answer.streams.filter((stream) => stream.is_default === true);
    expect(defaults.map((stream) => stream.name)).toEqual(['announce', 'general']);
    for (const stream of answer.streams) expect(typeof stream.is_default).toBe('boolean');
  });

  it('when a guest lists channels, then include_public has no effect and web-public ones come only on request', async () => {
    expect(names(await valid('guest'))).toEqual(['announce', 'general', 'gus-visitors']);
    expect(names(await valid('guest', { include_web_public: 'true' }))).toEqual([
      'announce',
      'general',
      'gus-visitors',
      'showcase',
    ]);
    expect(names(await valid('guest', { include_all: 'true' }))).toEqual([
      'announce',
      'general',
      'gus-visitors',
      'showcase',
    ]);
  });

  it('when a bot asks for include_owner_subscribed, then its owner’s private channels come too', async () => {
    // The seeded generic bot belongs to Grace, the administrator.
    const own = names(await valid('bot'));
    expect(own).not.toContain('grace-ops');
    const withOwner = names(await valid('bot', { include_owner_subscribed: 'true' }));
    expect(withOwner).toContain('grace-ops');
    expect(withOwner).toContain('Leadership');
    expect(withOwner).not.toContain('marie-lab');
  });

  it('when a private channel has a deactivated subscriber, then subscriber_count leaves them out', async () => {
    const answer = await valid('owner');
    const leadership = answer.streams.find((stream) => stream.name === 'Leadership');
    expect(leadership).toMatchObject({
      invite_only: true,
      history_public_to_subscribers: true,
      subscriber_count: 2,
    });
  });

  it('when a stream object is sent, then it has every field the document requires and the document’s group values', async () => {
    const answer = await valid('owner');
    const announce = answer.streams.find((stream) => stream.name === 'announce');
    expect(announce).toMatchObject({
      stream_id: 3,
      is_announcement_only: true,
      stream_post_policy: 2,
      default_push_notifications: true,
      message_retention_days: -1,
      topics_policy: 'inherit',
      can_administer_channel_group: { direct_members: [1], direct_subgroups: [] },
    });
    const general = answer.streams.find((stream) => stream.name === 'general');
    expect(general).toMatchObject({ creator_id: null, stream_weekly_traffic: 120 });
  });

  it('when a parameter is not a JSON boolean, then Zulip’s parameter error', async () => {
    const notJson = await valid('member', { include_public: 'yes' }, { offSpec: true });
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({
      code: 'BAD_REQUEST',
      msg: 'include_public is not valid JSON',
    });
    const notBoolean = await valid('member', { exclude_archived: '0' }, { offSpec: true });
    expect(notBoolean.body).toMatchObject({ msg: 'exclude_archived is not a boolean' });
  });

  it('when no credentials are sent, then 401 as on every other route', async () => {
    const response = await fetch(`${sim.apiBase}/streams`);
    const body = (await response.json()) as Body;
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Basic realm="zulip"');
    expect(body).toMatchObject({ result: 'error', code: 'UNAUTHORIZED' });
    expect(validator.validateResponse('GET', '/streams', 401, body)).toEqual([]);
  });

  it('when an unknown parameter is sent, then it is reported in ignored_parameters_unsupported', async () => {
    const answer = await valid('member', { include_everything: 'true' }, { offSpec: true });
    expect(answer.body.ignored_parameters_unsupported).toEqual(['include_everything']);
  });
});

describe('chat simulator: GET /streams at older feature levels', () => {
  /** Errors of the answer that are not a required field missing from a stream. */
  const otherErrors = (errors: string[], missing: string[]): string[] =>
    errors.filter(
      (error) => !missing.some((field) => error.includes(`must have required property '${field}'`)),
    );

  it('when the level is 506, then only default_push_notifications (new in 507) is missing', async () => {
    sim.setFeatureLevel(506);
    const answer = await listStreams('member');
    expect(answer.errors.length).toBeGreaterThan(0);
    expect(otherErrors(answer.errors, ['default_push_notifications'])).toEqual([]);
    for (const stream of answer.streams) {
      expect(stream).not.toHaveProperty('default_push_notifications');
    }
  });

  it('when the level is 314, then exclude_archived is ignored, archived channels never come and is_archived is absent', async () => {
    sim.setFeatureLevel(314);
    const answer = await listStreams('member', { exclude_archived: 'false' });
    expect(answer.status).toBe(200);
    expect(answer.body.ignored_parameters_unsupported).toEqual(['exclude_archived']);
    expect(names(answer)).not.toContain('legacy-support');
    for (const stream of answer.streams) {
      expect(stream).not.toHaveProperty('is_archived');
      expect(stream).not.toHaveProperty('folder_id');
      expect(stream).not.toHaveProperty('subscriber_count');
      expect(stream).toHaveProperty('creator_id');
    }
  });

  it('when the level is 355, then include_all is unknown and include_all_active is for administrators only', async () => {
    sim.setFeatureLevel(355);
    const ignored = await listStreams('member', { include_all: 'true' });
    expect(ignored.body.ignored_parameters_unsupported).toEqual(['include_all']);
    expect(names(ignored)).not.toContain('Leadership');

    const refused = await listStreams('member', { include_all_active: 'true' });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      result: 'error',
      msg: 'User not authorized for this query',
      code: 'BAD_REQUEST',
    });
    expect(refused.errors).toEqual([]);

    const admin = await listStreams('administrator', { include_all_active: 'true' });
    expect(names(admin)).toContain('marie-lab');
    expect(names(admin)).not.toContain('legacy-support');
  });

  it('when include_all_active is sent from level 356, then it is include_all for anyone', async () => {
    const member = await valid('member', { include_all_active: 'true' });
    expect(member.status).toBe(200);
    expect(names(member)).toEqual(names(await valid('member', { include_all: 'true' })));
  });
});

describe('chat simulator: channel control', () => {
  it('when a private channel is added for a user, then only that user sees it', async () => {
    const member = sim.credentials('member');
    const channel = sim.control.addChannel({
      name: 'Marie-Secret',
      invite_only: true,
      subscribers: [member.userId],
    });
    expect(channel).toMatchObject({ inviteOnly: true, creatorId: member.userId });
    expect(names(await valid('member'))).toContain('Marie-Secret');
    expect(names(await valid('moderator', { include_all: 'true' }))).not.toContain('Marie-Secret');
    expect(() => sim.control.addChannel({ name: 'marie-secret' })).toThrow(/already in use/);
  });

  it('when a channel is renamed or archived, then the next answer shows it', async () => {
    sim.control.updateChannel(4, { name: 'aardvark' });
    expect(names(await valid('member')).slice(0, 3)).toEqual(['Design', 'aardvark', 'announce']);

    sim.control.updateChannel(4, { is_archived: true });
    expect(names(await valid('member'))).not.toContain('aardvark');
    const archived = await valid('member', { exclude_archived: 'false' });
    expect(archived.streams.find((stream) => stream.stream_id === 4)).toMatchObject({
      name: 'aardvark',
      is_archived: true,
    });
  });

  it('when users list channels, then requestsBy counts each user’s calls to /streams', async () => {
    await valid('member');
    await valid('member', { include_default: 'true' });
    await valid('moderator');
    await fetch(`${sim.apiBase}/drafts`, { headers: { authorization: sim.authHeader('member') } });
    const member = sim.credentials('member').userId;
    const moderator = sim.credentials('moderator').userId;
    expect(sim.control.requestsBy(member, '/streams')).toHaveLength(2);
    expect(sim.control.requestsBy(member, '/api/v1/streams')).toHaveLength(2);
    expect(sim.control.requestsBy(moderator, '/streams')).toHaveLength(1);
    expect(sim.control.requestsBy(member)).toHaveLength(3);
  });

  it('when the HTTP control adds, renames and counts, then the realm and the count follow', async () => {
    const owner = sim.credentials('owner').userId;
    const added = await fetch(`${sim.origin}/__sim/channels`, {
      method: 'POST',
      body: JSON.stringify({ name: 'ops-war-room', invite_only: true, subscribers: [owner] }),
    });
    expect(added.status).toBe(201);
    const { id } = (await added.json()) as { id: number };
    const renamed = await fetch(`${sim.origin}/__sim/channels/${id}`, {
      method: 'PATCH',
      body: JSON.stringify({ name: 'war-room' }),
    });
    expect(renamed.status).toBe(200);
    expect(names(await valid('owner'))).toContain('war-room');
    const count = await fetch(`${sim.origin}/__sim/requests?user_id=${owner}&path=/streams`);
    expect(await count.json()).toEqual({ count: 1 });
  });
});

describe('Zulip’s GET /streams schema, as the helper reads it', () => {
  it('when a stream lacks a required field, has an extra one or a wrong type, then the document rejects it', async () => {
    const { body } = await valid('member');
    const first = (body.streams as Stream[])[0] as Stream;
    const withStream = (stream: Body): string[] =>
      validator.validateResponse('GET', '/streams', 200, { ...body, streams: [stream] });
    const { subscriber_count: _dropped, ...missing } = first;
    expect(withStream(missing).join()).toMatch(/required property 'subscriber_count'/);
    expect(withStream({ ...first, is_private: true }).join()).toMatch(/additional properties/i);
    expect(withStream({ ...first, folder_id: 'none' }).join()).toMatch(/folder_id/);
  });
});
