import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createChatSimulator,
  NEWEST_FEATURE_LEVEL,
  toBasicAuth,
  type ChatSimulator,
  type ChatSimulatorOptions,
  type CredentialKind,
} from '../../simulators/chat/chat-simulator.js';
import {
  createZulipOpenApiValidator,
  type ZulipOpenApiValidator,
} from '../helpers/zulip-openapi.js';

type Body = Record<string, unknown>;

interface Answer {
  status: number;
  headers: Headers;
  body: Body;
}

interface CallOptions {
  /** Whose Basic credentials to send; omit for none. */
  as?: CredentialKind;
  authorization?: string;
  query?: Record<string, string>;
  form?: Record<string, string>;
  /** The request breaks the OpenAPI on purpose (bad credentials, unknown parameters…). */
  offSpec?: boolean;
}

let validator: ZulipOpenApiValidator;
const started: ChatSimulator[] = [];

async function startSimulator(options: ChatSimulatorOptions = {}): Promise<ChatSimulator> {
  const sim = createChatSimulator(options);
  started.push(sim);
  await sim.listen();
  return sim;
}

/**
 * One real HTTP call. Every answer's body is checked against the OpenAPI file before the test
 * sees it, and so is every request not marked off-spec.
 */
async function call(
  sim: ChatSimulator,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  const authorization =
    options.authorization ?? (options.as ? sim.authHeader(options.as) : undefined);
  if (authorization !== undefined) headers.authorization = authorization;
  const query = new URLSearchParams(options.query).toString();
  const body = options.form ? new URLSearchParams(options.form).toString() : undefined;
  if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';

  if (!options.offSpec) {
    expect(
      validator.validateRequest({ method, path, query, headers, ...(body ? { body } : {}) }),
    ).toEqual([]);
  }
  const response = await fetch(`${sim.apiBase}${path}${query ? `?${query}` : ''}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  expect(response.headers.get('content-type')).toBe('application/json');
  const answer = {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Body,
  };
  expect(validator.validateResponse(method, path, answer.status, answer.body)).toEqual([]);
  return answer;
}

function errorOf(answer: Answer): { status: number; code: unknown; msg: unknown } {
  return { status: answer.status, code: answer.body.code, msg: answer.body.msg };
}

beforeAll(async () => {
  validator = await createZulipOpenApiValidator();
});

afterAll(async () => {
  await Promise.all(started.map((sim) => sim.close()));
});

describe('chat simulator: reading endpoints', () => {
  let sim: ChatSimulator;

  beforeAll(async () => {
    sim = await startSimulator();
  });

  afterEach(() => {
    sim.setFeatureLevel(NEWEST_FEATURE_LEVEL);
  });

  it('when an owner lists drafts, then they come most recently edited first with a matching count', async () => {
    const answer = await call(sim, 'GET', '/drafts', { as: 'owner' });
    const drafts = answer.body.drafts as { id: number; type: string; timestamp: number }[];
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ result: 'success', msg: '', count: 3 });
    expect(drafts.map((draft) => draft.id)).toEqual([2, 3, 1]);
    expect(drafts.map((draft) => draft.type).sort()).toEqual(['', 'private', 'stream']);
  });

  it('when a guest without drafts lists them, then the list is empty', async () => {
    const answer = await call(sim, 'GET', '/drafts', { as: 'guest' });
    expect(answer.body).toMatchObject({ count: 0, drafts: [] });
  });

  it('when a request carries unsupported parameters from feature level 167, then success reports them sorted', async () => {
    const answer = await call(sim, 'GET', '/drafts', {
      as: 'member',
      query: { zeta: '1', alpha: '2', client: 'test' },
      offSpec: true,
    });
    expect(answer.body.ignored_parameters_unsupported).toEqual(['alpha', 'zeta']);

    sim.setFeatureLevel(166);
    const older = await call(sim, 'GET', '/drafts', {
      as: 'member',
      query: { zeta: '1' },
      offSpec: true,
    });
    expect(older.body).not.toHaveProperty('ignored_parameters_unsupported');
  });

  it('when channel folders are listed from feature level 414, then they are sorted by order and carry it', async () => {
    const answer = await call(sim, 'GET', '/channel_folders', { as: 'member' });
    const folders = answer.body.channel_folders as { id: number; order: number }[];
    expect(folders.map((folder) => folder.id)).toEqual([2, 4, 1]);
    expect(folders.map((folder) => folder.order)).toEqual([0, 1, 2]);

    const all = await call(sim, 'GET', '/channel_folders', {
      as: 'member',
      query: { include_archived: 'true' },
    });
    const allFolders = all.body.channel_folders as { id: number; is_archived: boolean }[];
    expect(allFolders.map((folder) => folder.id)).toEqual([2, 4, 1, 3, 5]);
    expect(allFolders.filter((folder) => folder.is_archived).map((folder) => folder.id)).toEqual([
      3, 5,
    ]);
  });

  it('when channel folders are listed at feature level 413, then they are sorted by id without order', async () => {
    sim.setFeatureLevel(413);
    const answer = await call(sim, 'GET', '/channel_folders', {
      as: 'member',
      query: { include_archived: 'true' },
    });
    const folders = answer.body.channel_folders as Body[];
    expect(folders.map((folder) => folder.id)).toEqual([1, 2, 3, 4, 5]);
    for (const folder of folders) expect(folder).not.toHaveProperty('order');
  });

  it('when channel folders are asked for below feature level 389, then the endpoint does not exist', async () => {
    sim.setFeatureLevel(388);
    const response = await fetch(`${sim.apiBase}/channel_folders`, {
      headers: { authorization: sim.authHeader('member') },
    });
    const body = (await response.json()) as Body;
    expect(response.status).toBe(404);
    expect(body).toEqual({ result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' });
    expect(validator.validateSchema('CodedError', body)).toEqual([]);
    expect(validator.validateResponse('GET', '/channel_folders', 404, body)[0]).toMatch(
      /status 404 is documented neither/,
    );
  });

  it('when include_archived is not a JSON boolean, then the answer is Zulip’s parameter error', async () => {
    const notJson = await call(sim, 'GET', '/channel_folders', {
      as: 'member',
      query: { include_archived: 'yes' },
      offSpec: true,
    });
    expect(errorOf(notJson)).toEqual({
      status: 400,
      code: 'BAD_REQUEST',
      msg: 'include_archived is not valid JSON',
    });
    const notBoolean = await call(sim, 'GET', '/channel_folders', {
      as: 'member',
      query: { include_archived: '1' },
      offSpec: true,
    });
    expect(errorOf(notBoolean)).toEqual({
      status: 400,
      code: 'BAD_REQUEST',
      msg: 'include_archived is not a boolean',
    });
  });

  it('when each role asks for /users/me, then it gets its own record', async () => {
    for (const [kind, role] of [
      ['owner', 100],
      ['administrator', 200],
      ['moderator', 300],
      ['member', 400],
      ['guest', 600],
      ['bot', 400],
    ] as const) {
      const credentials = sim.credentials(kind);
      const answer = await call(sim, 'GET', '/users/me', { as: kind });
      expect(answer.body).toMatchObject({
        result: 'success',
        user_id: credentials.userId,
        delivery_email: credentials.email,
        role,
        is_bot: kind === 'bot',
        is_imported_stub: false,
      });
    }
  });

  it('when a path under /api/v1 is unknown, then the answer is a JSON 404 with result, msg and code', async () => {
    const response = await fetch(`${sim.apiBase}/no/such/endpoint`, {
      headers: { authorization: sim.authHeader('member') },
    });
    const body = (await response.json()) as Body;
    expect(response.status).toBe(404);
    expect(validator.validateSchema('CodedError', body)).toEqual([]);
  });

  it('when a known path gets a method it does not serve, then Zulip’s 405 with allowed_methods', async () => {
    const response = await fetch(`${sim.apiBase}/drafts`, {
      method: 'PUT',
      headers: { authorization: sim.authHeader('member') },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expect(await response.json()).toEqual({
      result: 'error',
      msg: 'Method Not Allowed',
      allowed_methods: ['GET'],
    });
  });

  it('when a shared fault is switched on, then it applies before the chat logic and runs out', async () => {
    sim.faults.add({
      fault: { kind: 'status', status: 503, body: '{"oops":true}' },
      pathPrefix: '/api/v1/drafts',
      times: 1,
    });
    const faulty = await fetch(`${sim.apiBase}/drafts`, {
      headers: { authorization: sim.authHeader('owner') },
    });
    expect(faulty.status).toBe(503);
    const healthy = await call(sim, 'GET', '/drafts', { as: 'owner' });
    expect(healthy.status).toBe(200);
  });
});

describe('chat simulator: GET /users/{email}', () => {
  let sim: ChatSimulator;

  beforeAll(async () => {
    sim = await startSimulator();
  });

  afterEach(() => {
    sim.setFeatureLevel(NEWEST_FEATURE_LEVEL);
  });

  const userOf = (answer: Answer): Body => answer.body.user as Body;

  it('when a member looks up a visible user by real address, then the real address is shown', async () => {
    const answer = await call(sim, 'GET', '/users/grace@acme.test', { as: 'member' });
    expect(userOf(answer)).toMatchObject({
      user_id: 2,
      email: 'grace@acme.test',
      delivery_email: 'grace@acme.test',
      role: 200,
      is_admin: true,
      bot_type: null,
    });
  });

  it('when a member looks up an admins-only address from feature level 302, then it is "No such user"', async () => {
    const answer = await call(sim, 'GET', '/users/ada@acme.test', { as: 'member' });
    expect(errorOf(answer)).toEqual({ status: 400, code: 'BAD_REQUEST', msg: 'No such user' });
  });

  it('when an administrator looks up the same address, then the user is found with the dummy API email', async () => {
    const answer = await call(sim, 'GET', '/users/ada@acme.test', { as: 'administrator' });
    expect(userOf(answer)).toMatchObject({
      user_id: 1,
      email: 'user1@chat.example.test',
      delivery_email: 'ada@acme.test',
      is_owner: true,
    });
  });

  it('when a member uses the dummy address of a hidden user from 302, then it works and hides the real one', async () => {
    const answer = await call(sim, 'GET', '/users/user6@chat.example.test', { as: 'member' });
    expect(userOf(answer)).toMatchObject({ user_id: 6, delivery_email: null });
  });

  it('when the server is below feature level 302, then only API emails match', async () => {
    sim.setFeatureLevel(301);
    const dummyOfHidden = await call(sim, 'GET', '/users/user1@chat.example.test', {
      as: 'administrator',
    });
    expect(userOf(dummyOfHidden)).toMatchObject({ user_id: 1 });
    const realOfHidden = await call(sim, 'GET', '/users/ada@acme.test', { as: 'administrator' });
    expect(errorOf(realOfHidden).msg).toBe('No such user');
    const dummyOfVisible = await call(sim, 'GET', '/users/user2@chat.example.test', {
      as: 'member',
    });
    expect(errorOf(dummyOfVisible).msg).toBe('No such user');
  });

  it('when the user does not exist, then the answer is 400 "No such user"', async () => {
    const answer = await call(sim, 'GET', '/users/nobody@acme.test', { as: 'owner' });
    expect(errorOf(answer)).toEqual({ status: 400, code: 'BAD_REQUEST', msg: 'No such user' });
  });

  it('when custom profile fields are requested, then Markdown fields carry rendered_value', async () => {
    const answer = await call(sim, 'GET', '/users/user1@chat.example.test', {
      as: 'owner',
      query: { include_custom_profile_fields: 'true' },
    });
    const profile = userOf(answer).profile_data as Record<string, Body>;
    expect(profile['2']?.rendered_value).toContain('&lt;the&gt;');
    expect(profile['9']).toEqual({ value: 'she/her' });
    expect(profile['4']).toEqual({ value: 'emacs' });
    const plain = await call(sim, 'GET', '/users/user1@chat.example.test', { as: 'owner' });
    expect(userOf(plain)).not.toHaveProperty('profile_data');
  });

  it('when a bot is looked up with profile fields, then it has bot fields and no profile_data', async () => {
    const bot = sim.realm.users.find((user) => user.id === 10);
    const legacy = sim.realm.users.find((user) => user.id === 13);
    const answer = await call(sim, 'GET', `/users/${bot?.deliveryEmail ?? ''}`, {
      as: 'guest',
      query: { include_custom_profile_fields: 'true' },
    });
    expect(userOf(answer)).toMatchObject({ is_bot: true, bot_type: 2, bot_owner_id: 4 });
    expect(userOf(answer)).not.toHaveProperty('profile_data');
    const legacyAnswer = await call(sim, 'GET', `/users/${legacy?.deliveryEmail ?? ''}`, {
      as: 'guest',
    });
    expect(userOf(legacyAnswer)).toMatchObject({ bot_type: 1, bot_owner_id: null });
  });

  it('when client_gravatar applies, then avatar_url is null only for visible gravatar users', async () => {
    const visible = await call(sim, 'GET', '/users/user1@chat.example.test', { as: 'owner' });
    expect(userOf(visible).avatar_url).toBeNull();
    const off = await call(sim, 'GET', '/users/user1@chat.example.test', {
      as: 'owner',
      query: { client_gravatar: 'false' },
    });
    expect(userOf(off).avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\//);
    const hidden = await call(sim, 'GET', '/users/user1@chat.example.test', { as: 'member' });
    expect(userOf(hidden).avatar_url).toMatch(/gravatar/);
    const uploaded = await call(sim, 'GET', '/users/grace@acme.test', { as: 'member' });
    expect(userOf(uploaded).avatar_url).toMatch(/\/user_avatars\/.*\?version=3$/);
  });

  it('when a deactivated user is looked up, then the record says is_active false', async () => {
    const answer = await call(sim, 'GET', '/users/dora@acme.test', { as: 'member' });
    expect(userOf(answer)).toMatchObject({ user_id: 8, is_active: false });
  });
});

describe('chat simulator: authentication and rate limits', () => {
  let sim: ChatSimulator;

  beforeAll(async () => {
    sim = await startSimulator();
  });

  it('when no credentials are sent, then 401 with WWW-Authenticate', async () => {
    const answer = await call(sim, 'GET', '/drafts', { offSpec: true });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe('Basic realm="zulip"');
    expect(answer.body).toMatchObject({ result: 'error', code: 'UNAUTHORIZED' });
  });

  it('when the API key is wrong or belongs to someone else, then 401 INVALID_API_KEY', async () => {
    const member = sim.credentials('member');
    const owner = sim.credentials('owner');
    for (const authorization of [
      toBasicAuth(member.email, 'A'.repeat(32)),
      toBasicAuth(member.email, owner.apiKey),
    ]) {
      const answer = await call(sim, 'GET', '/users/me', { authorization });
      expect(errorOf(answer)).toEqual({
        status: 401,
        code: 'INVALID_API_KEY',
        msg: 'Invalid API key',
      });
      expect(answer.headers.get('www-authenticate')).toBe('Basic realm="zulip"');
    }
  });

  it('when the header is not Basic or the key is malformed, then Zulip’s 400 and 401 answers', async () => {
    const bearer = await call(sim, 'GET', '/drafts', {
      authorization: 'Bearer abc',
      offSpec: true,
    });
    expect(errorOf(bearer)).toEqual({
      status: 400,
      code: 'BAD_REQUEST',
      msg: 'This endpoint requires HTTP basic authentication.',
    });
    const short = await call(sim, 'GET', '/drafts', {
      authorization: toBasicAuth(sim.credentials('member').email, 'short'),
    });
    expect(errorOf(short)).toEqual({
      status: 401,
      code: 'INVALID_API_KEY',
      msg: 'Malformed API key',
    });
    const garbled = await call(sim, 'GET', '/drafts', {
      authorization: 'Basic bm9jb2xvbg==',
      offSpec: true,
    });
    expect(errorOf(garbled)).toEqual({
      status: 401,
      code: 'UNAUTHORIZED',
      msg: 'Invalid authorization header for basic auth',
    });
  });

  it('when a deactivated user authenticates, then 401 USER_DEACTIVATED', async () => {
    const answer = await call(sim, 'GET', '/users/me', { as: 'deactivated' });
    expect(errorOf(answer)).toEqual({
      status: 401,
      code: 'USER_DEACTIVATED',
      msg: 'Account is deactivated',
    });
    expect(answer.headers.get('www-authenticate')).toBe('Basic realm="zulip"');
  });

  it('when a password login succeeds, then the API key works for /users/me', async () => {
    const member = sim.credentials('member');
    const login = await call(sim, 'POST', '/fetch_api_key', {
      form: { username: member.email, password: member.password ?? '' },
    });
    expect(login.body).toEqual({
      result: 'success',
      msg: '',
      api_key: member.apiKey,
      email: member.email,
      user_id: member.userId,
    });
    // The base records what the server received, for assertions on the gateway's requests.
    const recorded = sim.requests.find((request) => request.pathname === '/api/v1/fetch_api_key');
    expect(new URLSearchParams(recorded?.body).get('username')).toBe(member.email);
    const me = await call(sim, 'GET', '/users/me', {
      authorization: toBasicAuth(member.email, String(login.body.api_key)),
    });
    expect(me.body.user_id).toBe(member.userId);
  });

  it('when a password login fails, then the documented 401 errors come back', async () => {
    const member = sim.credentials('member');
    const wrong = await call(sim, 'POST', '/fetch_api_key', {
      form: { username: member.email, password: 'not-it' },
    });
    expect(errorOf(wrong)).toEqual({
      status: 401,
      code: 'AUTHENTICATION_FAILED',
      msg: 'Your username or password is incorrect',
    });
    const gone = sim.credentials('deactivated');
    const deactivated = await call(sim, 'POST', '/fetch_api_key', {
      form: { username: gone.email, password: gone.password ?? '' },
    });
    expect(errorOf(deactivated)).toEqual({
      status: 401,
      code: 'USER_DEACTIVATED',
      msg: 'Account is deactivated',
    });
    const missing = await call(sim, 'POST', '/fetch_api_key', {
      form: { username: member.email },
      offSpec: true,
    });
    expect(missing.body).toMatchObject({ code: 'REQUEST_VARIABLE_MISSING', var_name: 'password' });
  });

  it('when Zulip rate-limits, then 429 RATE_LIMIT_HIT with Retry-After, once', async () => {
    sim.rateLimitNext(7);
    const limited = await call(sim, 'GET', '/drafts', { as: 'member' });
    expect(errorOf(limited)).toEqual({
      status: 429,
      code: 'RATE_LIMIT_HIT',
      msg: 'API usage exceeded rate limit',
    });
    expect(limited.body['retry-after']).toBe(7);
    expect(limited.headers.get('retry-after')).toBe('7');
    const next = await call(sim, 'GET', '/drafts', { as: 'member' });
    expect(next.status).toBe(200);
  });
});

describe('chat simulator: POST /users/{user_id}/status', () => {
  let sim: ChatSimulator;

  beforeAll(async () => {
    sim = await startSimulator();
  });

  afterEach(() => {
    sim.setFeatureLevel(NEWEST_FEATURE_LEVEL);
  });

  const update = (as: CredentialKind, form: Record<string, string>, userId = 4): Promise<Answer> =>
    call(sim, 'POST', `/users/${userId}/status`, { as, form });

  it('when an administrator sets text and emoji, then the status is stored', async () => {
    const answer = await update('administrator', {
      status_text: '  on vacation  ',
      emoji_name: 'car',
    });
    expect(answer.body).toEqual({ result: 'success', msg: '' });
    expect(sim.realm.statuses.get(4)).toEqual({
      statusText: 'on vacation',
      emojiName: 'car',
      emojiCode: '1f697',
      reactionType: 'unicode_emoji',
    });
    await update('owner', { emoji_name: 'zulip', reaction_type: 'service_extra_emoji' });
    expect(sim.realm.statuses.get(4)).toMatchObject({
      emojiCode: 'zulip',
      statusText: 'on vacation',
    });
  });

  it('when an unsupported parameter is sent, then the success reports it', async () => {
    const answer = await call(sim, 'POST', '/users/4/status', {
      as: 'administrator',
      form: { status_text: 'busy', away: 'true' },
    });
    expect(answer.body.ignored_parameters_unsupported).toEqual(['away']);
  });

  it.each([
    ['member', { status_text: 'hi' }, 'Insufficient permission'],
    ['moderator', { status_text: 'hi' }, 'Insufficient permission'],
    ['administrator', {}, 'Client did not pass any new values.'],
    // Zulip checks for new values before the emoji pairing: a lone emoji_code is "no new values".
    ['administrator', { emoji_code: '1f697' }, 'Client did not pass any new values.'],
    [
      'administrator',
      { status_text: 'x'.repeat(61) },
      'status_text is too long (limit: 60 characters)',
    ],
    [
      'administrator',
      { status_text: 'hi', emoji_code: '1f697' },
      'Client must pass emoji_name if they pass either emoji_code or reaction_type.',
    ],
    [
      'administrator',
      { status_text: 'hi', reaction_type: 'unicode_emoji' },
      'Client must pass emoji_name if they pass either emoji_code or reaction_type.',
    ],
    ['administrator', { emoji_name: 'no_such_emoji' }, "Emoji 'no_such_emoji' does not exist"],
    [
      'administrator',
      { emoji_name: 'car', emoji_code: '1f419', reaction_type: 'unicode_emoji' },
      'Invalid emoji name.',
    ],
    [
      'administrator',
      { emoji_name: 'green_tick', emoji_code: '999', reaction_type: 'realm_emoji' },
      'Invalid custom emoji.',
    ],
  ] as const)(
    'when %s sends %j, then 400 BAD_REQUEST "%s" (chat document 7.2)',
    async (as, form, msg) => {
      const answer = await update(as, form);
      expect(errorOf(answer)).toEqual({ status: 400, code: 'BAD_REQUEST', msg });
    },
  );

  it('when status_text is 60 emoji, then it passes; 61 emoji fail (code points, not UTF-16 units)', async () => {
    const sixty = '🐙'.repeat(60);
    expect(sixty.length).toBe(120);
    const ok = await update('administrator', { status_text: ` ${sixty} ` });
    expect(ok.status).toBe(200);
    expect(sim.realm.statuses.get(4)?.statusText).toBe(sixty);
    const tooLong = await update('administrator', { status_text: `${sixty}🐙` });
    expect(errorOf(tooLong).msg).toBe('status_text is too long (limit: 60 characters)');
  });

  it('when the target user does not exist, then 400 "No such user"', async () => {
    const answer = await update('administrator', { status_text: 'hi' }, 999);
    expect(errorOf(answer)).toEqual({ status: 400, code: 'BAD_REQUEST', msg: 'No such user' });
  });

  it('when the target is a bot or deactivated, or a bot calls below 473, then Zulip’s answers', async () => {
    expect(errorOf(await update('administrator', { status_text: 'hi' }, 9)).msg).toBe(
      'No such user',
    );
    expect(errorOf(await update('administrator', { status_text: 'hi' }, 8)).msg).toBe(
      'User is deactivated',
    );
    const adminBot = sim.realm.users.find((user) => user.id === 14);
    const authorization = toBasicAuth(adminBot?.deliveryEmail ?? '', adminBot?.apiKey ?? '');
    const allowed = await call(sim, 'POST', '/users/4/status', {
      authorization,
      form: { status_text: 'set by a bot' },
    });
    expect(allowed.status).toBe(200);
    sim.setFeatureLevel(472);
    const refused = await call(sim, 'POST', '/users/4/status', {
      authorization,
      form: { status_text: 'set by a bot' },
    });
    expect(errorOf(refused).msg).toBe('This endpoint does not accept bot requests.');
  });

  it('when the server is below feature level 407, then the endpoint does not exist', async () => {
    sim.setFeatureLevel(406);
    const response = await fetch(`${sim.apiBase}/users/4/status`, {
      method: 'POST',
      headers: {
        authorization: sim.authHeader('administrator'),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'status_text=hi',
    });
    expect(response.status).toBe(404);
    expect(validator.validateSchema('CodedError', await response.json())).toEqual([]);
  });
});

describe('chat simulator: DELETE /realm/emoji/{emoji_name}', () => {
  it('when an administrator deactivates an emoji, then it is gone and a second try is 404 from 190', async () => {
    const sim = await startSimulator();
    const first = await call(sim, 'DELETE', '/realm/emoji/green_tick', { as: 'administrator' });
    expect(first.body).toEqual({ result: 'success', msg: '' });
    expect(sim.realm.customEmoji.find((emoji) => emoji.name === 'green_tick')?.deactivated).toBe(
      true,
    );
    const again = await call(sim, 'DELETE', '/realm/emoji/green_tick', { as: 'administrator' });
    expect(errorOf(again)).toEqual({
      status: 404,
      code: 'BAD_REQUEST',
      msg: "Emoji 'green_tick' does not exist",
    });
  });

  it('when the server is at feature level 189, then a missing emoji is 400 instead of 404', async () => {
    const sim = await startSimulator({ featureLevel: 189 });
    const answer = await call(sim, 'DELETE', '/realm/emoji/old_logo', { as: 'owner' });
    expect(errorOf(answer)).toEqual({
      status: 400,
      code: 'BAD_REQUEST',
      msg: "Emoji 'old_logo' does not exist",
    });
    sim.setFeatureLevel(190);
    const newer = await call(sim, 'DELETE', '/realm/emoji/old_logo', { as: 'owner' });
    expect(newer.status).toBe(404);
  });

  it('when a member deactivates someone else’s emoji, then it is refused; their own is allowed', async () => {
    const sim = await startSimulator();
    const refused = await call(sim, 'DELETE', '/realm/emoji/ship_it', { as: 'member' });
    expect(errorOf(refused)).toEqual({
      status: 400,
      code: 'BAD_REQUEST',
      msg: 'Must be an organization administrator or emoji author',
    });
    const own = await call(sim, 'DELETE', '/realm/emoji/marie_wave', { as: 'member' });
    expect(own.status).toBe(200);
  });
});

describe('Zulip OpenAPI validator', () => {
  it('when paths are matched, then /users/me and /users/{email} and the status path are told apart', () => {
    expect(validator.operationId('GET', '/users/me')).toBe('get-own-user');
    expect(validator.operationId('GET', '/api/v1/users/user5@chat.example.test')).toBe(
      'get-user-by-email',
    );
    expect(validator.operationId('POST', '/users/12/status')).toBe('update-status-for-user');
    expect(validator.operationId('GET', '/nowhere')).toBeUndefined();
  });

  it('when a request breaks the OpenAPI, then each fault is reported', () => {
    const authorization = toBasicAuth('ada@acme.test', 'k'.repeat(32));
    expect(
      validator.validateRequest({
        method: 'GET',
        path: '/channel_folders?include_archived=true',
        headers: { authorization },
      }),
    ).toEqual([]);
    expect(
      validator
        .validateRequest({
          method: 'GET',
          path: '/channel_folders',
          query: 'include_archived=yes',
          headers: { authorization },
        })
        .join('\n'),
    ).toMatch(/include_archived/);
    expect(validator.validateRequest({ method: 'GET', path: '/drafts', headers: {} })).toEqual([
      'request headers: missing or malformed Basic credentials (email:API key)',
    ]);
    expect(
      validator.validateRequest({
        method: 'POST',
        path: '/users/4/status',
        headers: { authorization, 'content-type': 'application/json' },
        body: '{"status_text":"hi"}',
      })[0],
    ).toMatch(/form-encoded bodies only/);
    expect(
      validator
        .validateRequest({ method: 'POST', path: '/users/abc/status', headers: { authorization } })
        .join('\n'),
    ).toMatch(/user_id/);
    expect(
      validator
        .validateRequest({
          method: 'POST',
          path: '/fetch_api_key',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'username=ada%40acme.test',
        })
        .join('\n'),
    ).toMatch(/password/);
  });

  it('when a response breaks its schema, then the validator says where', () => {
    const errors = validator.validateResponse('GET', '/drafts', 200, {
      result: 'success',
      msg: '',
      count: 1,
      drafts: [{ id: 1, type: 'channel', to: [1], topic: '', content: '' }],
    });
    expect(errors.join('\n')).toMatch(/\/drafts\/0\/type/);
  });
});
