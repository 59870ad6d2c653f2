import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { createChatSimulator } from '../simulators/chat/chat-simulator.js';
import { createSearchSimulator } from '../simulators/search/search-simulator.js';
import { freePort, repoRoot } from '../test/harness/chaos-processes.js';
import { ROUTE_TABLE } from '../src/features/route-table.js';
import { prepareBaseline } from './baseline-build.js';

/*
 * `npm run answers -- <git rev>`: are this build's answers byte-identical to another build's?
 * Each build's gateway runs as a process in front of fresh simulators (the same seeds), in
 * service mode and in session mode, and is sent the same few hundred requests one after
 * another across every route: valid and invalid inputs, content codings, conditional
 * requests, HEAD, CORS, links followed, log-in and log-out. Status, headers and body bytes are
 * compared; only what changes from run to run by design is masked (Date, the session id in
 * Set-Cookie, an expiry time in a session body), and /metrics' body (its counters depend on
 * timing). Prints the differences; exits 1 when there is one.
 */

interface Step {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Which cookie jar entry to send and update (session mode). */
  session?: boolean;
}

interface Answer {
  request: string;
  status: number;
  headers: string;
  bodyLength: number;
  bodyDigest: string;
  bodyText: string;
}

const SEARCH_TOKEN = 'answers-search-token';
const ORIGIN = 'http://app.example';
const UNSAFE = { Origin: ORIGIN, 'X-CSRF': '1', 'Content-Type': 'application/json' };
const CODINGS = [undefined, 'gzip', 'br', 'gzip, deflate, br, zstd', 'br;q=0, gzip', 'identity'];

function searchSteps(): Step[] {
  const steps: Step[] = [];
  const queries = ['lamp', 'laptop', 'backpack', 'desk chair', 'kettle', 'über', '%E2%9C%93'];
  for (const q of queries) {
    for (const coding of CODINGS) {
      steps.push({
        method: 'GET',
        path: `/api/search?q=${q}`,
        headers: coding === undefined ? {} : { 'Accept-Encoding': coding },
      });
    }
    for (const sort of ['relevance', 'price_asc', 'price_desc', 'rating']) {
      steps.push({ method: 'GET', path: `/api/search?q=${q}&sort=${sort}&k=5` });
    }
    steps.push({ method: 'HEAD', path: `/api/search?q=${q}` });
    steps.push({
      method: 'GET',
      path: `/api/search?q=${q}`,
      headers: { Accept: 'application/ld+json' },
    });
  }
  for (const bad of [
    '',
    '?q=',
    '?k=5',
    '?q=lamp&k=0',
    '?q=lamp&k=abc',
    '?q=lamp&k=1.5',
    '?q=lamp&k=100000',
    '?q=lamp&q=desk',
    '?q=lamp&sort=nope',
    '?q=lamp&cursor=forged',
    `?q=${'x'.repeat(600)}`,
    '?q=lamp&__proto__=1',
  ]) {
    steps.push({ method: 'GET', path: `/api/search${bad}` });
  }
  steps.push({ method: 'POST', path: '/api/search?q=lamp', headers: UNSAFE, body: '{}' });
  steps.push({ method: 'GET', path: '/api/search?q=lamp', headers: { Accept: 'text/csv' } });
  return steps;
}

function chatSteps(session: boolean, emails: { owner: string; administrator: string }): Step[] {
  const s = { session };
  const steps: Step[] = [];
  for (const coding of CODINGS) {
    const headers = coding === undefined ? {} : { 'Accept-Encoding': coding };
    steps.push({ ...s, method: 'GET', path: '/api/chat/drafts', headers });
    steps.push({ ...s, method: 'GET', path: '/api/chat/channel-folders', headers });
    steps.push({
      ...s,
      method: 'GET',
      path: '/api/chat/channel-folders?include_archived=true',
      headers,
    });
    steps.push({ ...s, method: 'GET', path: '/api/chat/channels', headers });
    steps.push({ ...s, method: 'GET', path: '/api/chat/channels?include_archived=1', headers });
    steps.push({ ...s, method: 'GET', path: '/api/bootstrap', headers });
  }
  // An event stream never ends: its refusals and its HEAD (the head alone, at once) are answers.
  steps.push({ ...s, method: 'GET', path: '/api/events?include_archived=maybe' });
  steps.push({ ...s, method: 'HEAD', path: '/api/events' });
  for (const path of [
    '/api/chat/channel-folders?include_archived=maybe',
    `/api/chat/users/${emails.owner}`,
    `/api/chat/users/${emails.administrator}?client_gravatar=true`,
    `/api/chat/users/${emails.owner}?include_custom_profile_fields=true`,
    '/api/chat/users/nobody@chat.example.test',
    '/api/chat/users/not-an-email',
    '/api/chat/users/a%2Fb@chat.example.test',
    '/api/chat/nothing-here',
  ]) {
    steps.push({ ...s, method: 'GET', path });
  }
  for (const body of [
    '{"status_text":"At lunch","emoji_name":"coffee"}',
    '{"status_text":"x","away":"yes"}',
    '{"status_text":' + JSON.stringify('y'.repeat(70)) + '}',
    'not json',
    '{}',
  ]) {
    for (const user of ['2', '3', '8', '0', 'abc']) {
      steps.push({
        ...s,
        method: 'POST',
        path: `/api/chat/users/${user}/status`,
        headers: UNSAFE,
        body,
      });
    }
  }
  steps.push({
    ...s,
    method: 'POST',
    path: '/api/chat/users/8/status',
    headers: { 'Content-Type': 'application/json' },
    body: '{"status_text":"no csrf header"}',
  });
  for (const emoji of ['green_tick', 'nonexistent', '..%2F..']) {
    steps.push({ ...s, method: 'DELETE', path: `/api/chat/emoji/${emoji}`, headers: UNSAFE });
  }
  steps.push({ ...s, method: 'PUT', path: '/api/chat/drafts', headers: UNSAFE, body: '{}' });
  return steps;
}

function operationsSteps(): Step[] {
  const steps: Step[] = [];
  for (const path of ['/healthz', '/readyz', '/openapi.json', '/docs', '/docs/docs.js']) {
    steps.push({ method: 'GET', path });
    steps.push({ method: 'GET', path, headers: { 'Accept-Encoding': 'br' } });
  }
  steps.push({ method: 'GET', path: '/metrics' });
  steps.push({ method: 'GET', path: '/does-not-exist' });
  steps.push({ method: 'GET', path: '/api' });
  steps.push({ method: 'DELETE', path: '/healthz' });
  steps.push({
    method: 'OPTIONS',
    path: '/api/search?q=lamp',
    headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'GET' },
  });
  steps.push({
    method: 'OPTIONS',
    path: '/api/chat/users/8/status',
    headers: {
      Origin: 'http://evil.example',
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'content-type, x-csrf',
    },
  });
  steps.push({ method: 'GET', path: '/api/search?q=lamp', headers: { Origin: ORIGIN } });
  return steps;
}

function authSteps(owner: { email: string; password: string }): Step[] {
  const login = (email: string, password: string): Step => ({
    method: 'POST',
    path: '/api/auth/login',
    headers: UNSAFE,
    body: JSON.stringify({ email, password }),
    session: true,
  });
  return [
    { method: 'GET', path: '/api/auth/session', session: true },
    { method: 'GET', path: '/api/chat/drafts', session: true },
    login(owner.email, 'wrong password'),
    login('not an email', 'x'),
    { method: 'POST', path: '/api/auth/login', headers: UNSAFE, body: '{', session: true },
    login(owner.email, owner.password),
    { method: 'GET', path: '/api/auth/session', session: true },
  ];
}

/** Last: the session ends, and what needed it is refused. */
function logoutSteps(): Step[] {
  return [
    { method: 'POST', path: '/api/auth/logout', headers: UNSAFE, session: true },
    { method: 'GET', path: '/api/auth/session', session: true },
    { method: 'GET', path: '/api/chat/channels', session: true },
  ];
}

/** The body's text when it is small and text, so a difference can be shown. */
/**
 * The recorder's list is checked against the route table, not kept beside it: a route this
 * mode serves that no step asks is an error, so a new route cannot go unrecorded.
 */
function assertEveryRoute(steps: readonly Step[], mode: 'session' | 'service'): void {
  const served = ROUTE_TABLE.filter(
    (route) => !route.undocumented && (route.servedWhen !== 'sessionMode' || mode === 'session'),
  );
  const missing = served.filter((route) => {
    // Followed from each search's first result link, not asked as a step of its own.
    if (route.id === 'followResultLink') return false;
    const pattern = new RegExp(`^${route.path.replace(/\{[^}]+\}/g, '[^/?]+')}(\\?|$)`);
    return !steps.some(
      (step) => step.method === route.method.toUpperCase() && pattern.test(step.path),
    );
  });
  if (missing.length > 0) {
    throw new Error(
      `answers: no step asks ${missing.map((r) => `${r.method.toUpperCase()} ${r.path}`).join(', ')} in ${mode} mode`,
    );
  }
}

function printable(body: Buffer, contentType: string | undefined): string {
  const text = contentType !== undefined && /json|text|html|javascript/.test(contentType);
  return text && body.length <= 65536 ? body.toString('utf8') : '';
}

/** A body as its coding says (br, gzip), so that what is masked can be found in it. */
function decode(body: Buffer, coding: string | undefined): Buffer {
  if (coding === 'br') return brotliDecompressSync(body);
  if (coding === 'gzip') return gunzipSync(body);
  return body;
}

/** What differs between runs by design: masked before comparing. */
function mask(text: string): string {
  return (
    text
      .replace(/(bff_session|__Host-bff_session)=[^;]+/g, '$1=<session>')
      .replace(/; Expires=[^;]+/g, '; Expires=<time>')
      // Seconds left, which move with the clock: a cache entry's ttl, a rate-limit window's reset.
      .replace(/; ttl=-?\d+/g, '; ttl=<s>')
      .replace(/;t=\d+/g, ';t=<s>')
      // A session's times, from the clock of its login.
      .replace(/"(created_at|idle_expires_at|expires_at)":"[^"]+"/g, '"$1":"<time>"')
  );
}

function send(base: string, step: Step, index: number, jar: { cookie?: string }): Promise<Answer> {
  const url = new URL(step.path, base);
  const headers: Record<string, string> = {
    'X-Request-Id': `answers-${index}`,
    ...step.headers,
    ...(step.session && jar.cookie ? { Cookie: jar.cookie } : {}),
  };
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: step.method, headers, agent: false, setHost: true },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const setCookie = res.headers['set-cookie']?.[0];
          if (step.session && setCookie) jar.cookie = setCookie.split(';')[0] ?? '';
          const shown = Object.entries(res.headers)
            .filter(([name]) => name !== 'date' && name !== 'connection' && name !== 'keep-alive')
            .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(' | ') : value}`)
            .sort()
            .join('\n');
          const metrics = step.path === '/metrics';
          const coding = res.headers['content-encoding'];
          const decoded = decode(body, coding);
          const text = decoded.toString('latin1');
          // Masked text is compared decoded; anything else byte for byte, as it was sent.
          const masked = mask(text);
          const compared = masked === text ? body : Buffer.from(masked, 'latin1');
          resolve({
            request: `${step.method} ${step.path} ${JSON.stringify(step.headers ?? {})}${step.body ? ` ${step.body.slice(0, 80)}` : ''}`,
            status: res.statusCode ?? 0,
            headers: mask(
              metrics || masked !== text ? shown.replace(/content-length: \d+/, '') : shown,
            ),
            bodyLength: metrics ? 0 : compared.length,
            bodyDigest: metrics ? '' : createHash('sha256').update(compared).digest('hex'),
            bodyText: metrics ? '' : mask(printable(decoded, res.headers['content-type'])),
          });
        });
      },
    );
    req.on('error', reject);
    req.end(step.body);
  });
}

async function startGateway(
  entry: string,
  env: Record<string, string>,
): Promise<{
  url: string;
  child: ChildProcess;
}> {
  const child = spawn(process.execPath, [entry], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`gateway ${entry} exited with ${code}`)));
    child.on('message', (notice: { event?: string; url?: string }) => {
      if (notice.event === 'listening' && notice.url) resolve(notice.url);
    });
  });
  return { url, child };
}

async function record(entry: string, ports: { chat: number; search: number }): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const mode of ['service', 'session'] as const) {
    const chat = createChatSimulator();
    const search = createSearchSimulator({ clientToken: SEARCH_TOKEN, queryDurationMs: 3 });
    // The same ports for every build: result links carry the search service's origin.
    await Promise.all([chat.listen(ports.chat), search.listen(ports.search)]);
    const account = chat.credentials('administrator');
    const owner = chat.credentials('owner');
    const gateway = await startGateway(entry, {
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      SEARCH_BASE_URL: search.origin,
      SEARCH_CLIENT_TOKEN: SEARCH_TOKEN,
      SEARCH_LINKS: 'gateway',
      CHAT_BASE_URL: chat.origin,
      CHAT_AUTH_MODE: mode,
      CHAT_EMAIL: account.email,
      CHAT_API_KEY: account.apiKey,
      CHAT_EVENTS: 'off',
      CURSOR_SECRET: 'answers-cursor-secret-0123456789abcdef',
      SESSION_SECRET: 'answers-session-secret-0123456789abcdef',
      SESSION_COOKIE_SECURE: 'false',
      CORS_ORIGINS: ORIGIN,
      RATE_LIMIT_PER_CLIENT: '1000000',
      METRICS: 'on',
    });
    try {
      const steps = [
        ...operationsSteps(),
        ...searchSteps(),
        ...(mode === 'session'
          ? authSteps({ email: owner.email, password: owner.password ?? '' })
          : []),
        ...chatSteps(mode === 'session', { owner: owner.email, administrator: account.email }),
        ...(mode === 'session' ? logoutSteps() : []),
      ];
      assertEveryRoute(steps, mode);
      const jar: { cookie?: string } = {};
      for (const [index, step] of steps.entries()) {
        const answer = await send(gateway.url, step, index, jar);
        answers.push({ ...answer, request: `[${mode}] ${answer.request}` });
        // Follow the first result link of each search once: the redirect proxy, signed links.
        const link = /"url":"(?:https?:\/\/[^/"]+)?(\/api\/search\/url\?[^"]+)"/.exec(
          answer.bodyText,
        )?.[1];
        if (link && step.method === 'GET' && !step.headers?.['Accept-Encoding']) {
          const followed = await send(gateway.url, { method: 'GET', path: link }, index, jar);
          answers.push({ ...followed, request: `[${mode}] GET <first link of ${step.path}>` });
        }
      }
    } finally {
      gateway.child.kill('SIGTERM');
      await new Promise((resolve) => gateway.child.once('exit', resolve));
      await Promise.all([chat.close(), search.close()]);
    }
  }
  return answers;
}

/** One field's difference, as a reader needs it: only the header lines that differ. */
function describeDifference(field: keyof Answer, before: Answer, now: Answer): string {
  if (field === 'headers') {
    const was = new Set(before.headers.split('\n'));
    const is = new Set(now.headers.split('\n'));
    const gone = [...was].filter((line) => !is.has(line)).map((line) => `  - ${line}`);
    const added = [...is].filter((line) => !was.has(line)).map((line) => `  + ${line}`);
    return [...gone, ...added].join('\n');
  }
  const shown = `  ${field}: ${String(before[field])} → ${String(now[field])}`;
  return field === 'bodyDigest' || field === 'bodyLength'
    ? `${shown}\n  body before: ${before.bodyText}\n  body now:    ${now.bodyText}`
    : shown;
}

async function main(): Promise<void> {
  const rev = process.argv[2];
  if (!rev) throw new Error('usage: npm run answers -- <git rev to compare this build with>');
  // `self`: this build against itself, which shows that nothing unmasked varies between runs.
  const current = join(repoRoot(), 'dist/src/main.js');
  const baseline =
    rev === 'self'
      ? { rev, commit: 'this build', entry: current, remove: () => undefined }
      : prepareBaseline(rev, repoRoot());
  try {
    const ports = { chat: await freePort(), search: await freePort() };
    const before = await record(baseline.entry, ports);
    const after = await record(current, ports);
    const differences: string[] = [];
    if (before.length !== after.length) {
      differences.push(`${before.length} answers before, ${after.length} now`);
    }
    for (const [i, a] of after.entries()) {
      const b = before[i];
      if (!b) continue;
      for (const field of ['request', 'status', 'headers', 'bodyLength', 'bodyDigest'] as const) {
        if (a[field] !== b[field]) {
          differences.push(`#${i} ${a.request}\n${describeDifference(field, b, a)}`);
          break;
        }
      }
    }
    const statuses = new Map<number, number>();
    for (const a of after) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    process.stdout.write(
      `${after.length} answers compared with ${baseline.rev} (${baseline.commit}); statuses ${[
        ...statuses,
      ]
        .sort((x, y) => x[0] - y[0])
        .map(([s, n]) => `${s}×${n}`)
        .join(' ')}\n`,
    );
    if (process.env['ANSWERS_DUMP']) {
      writeFileSync(process.env['ANSWERS_DUMP'], JSON.stringify({ before, after }, null, 1));
    }
    if (differences.length === 0) {
      process.stdout.write('byte-identical: status, headers and body of every answer\n');
      return;
    }
    process.stdout.write(`${differences.length} differ:\n${differences.join('\n')}\n`);
    process.exitCode = 1;
  } finally {
    baseline.remove();
  }
}

await main();
