import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulators, type RunningSimulators } from '../../simulators/start-simulators.js';
import { launchBrowser, watch } from '../helpers/browser.js';
import { eventually } from '../helpers/eventually.js';
import { SEARCH_TOKEN, createTestGateway, type TestGateway } from '../helpers/test-gateway.js';

/*
 * The demo page in a real browser (Debian's Chromium through playwright-core) against the
 * gateway serving it from STATIC_DIR, with the simulated upstreams behind. What a frontend
 * developer would do: load it, search, resort, page, follow a result link, log in, set a
 * status wrong and right, and see a failing upstream's part while the rest works.
 */

const PAGE_DIR = fileURLToPath(new URL('../../simulators/demo-page/', import.meta.url));

let sims: RunningSimulators;
let browser: Browser;
let gw: TestGateway | undefined;
let page: Page;

beforeAll(async () => {
  sims = await startSimulators({ clientToken: SEARCH_TOKEN });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await sims?.close();
});
beforeEach(async () => {
  for (const sim of [sims.search, sims.chat]) {
    sim.requests.length = 0;
    sim.faults.clear();
  }
  page = await browser.newPage();
  // Result links end at shops on hosts that do not resolve offline: the test stops at the
  // gateway's redirect and never leaves loopback.
  await page.route(/^https?:\/\/(?!127\.0\.0\.1)/, (route) => route.abort());
});
afterEach(async () => {
  await page.close();
  await gw?.close();
  gw = undefined;
});

async function open(env: Record<string, string>) {
  const admin = sims.chat.credentials('administrator');
  gw = await createTestGateway({
    searchOrigin: sims.searchOrigin,
    chatOrigin: sims.chatOrigin,
    env: {
      STATIC_DIR: PAGE_DIR,
      STATIC_IMG_SRC: `'self' data: ${sims.imageOrigin}`,
      SEARCH_LINKS: 'gateway',
      SESSION_COOKIE_SECURE: 'false',
      CHAT_AUTH_MODE: 'service',
      CHAT_EMAIL: admin.email,
      CHAT_API_KEY: admin.apiKey,
      ...env,
    },
  });
  const seen = watch(page);
  await page.goto(gw.gateway.url);
  await page.locator('.card').first().waitFor();
  return seen;
}

const cardNames = (p: Page) => p.locator('.card .name').allTextContents();

/** Waits until the result cards are no longer `before` (a new search has been rendered). */
async function cardsChangedFrom(p: Page, before: string[]) {
  // A function, not a string: the page's CSP rightly forbids evaluating strings.
  await p.waitForFunction((previous) => {
    type Doc = { querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }> };
    const doc = (globalThis as unknown as { document: Doc }).document;
    return (
      Array.from(doc.querySelectorAll('.card .name'), (e) => e.textContent).join('|') !== previous
    );
  }, before.join('|'));
}

describe('the demo page in service mode', () => {
  it('when it is used normally (load, search, resort, page), then nothing fails and no console error is logged', async () => {
    const seen = await open({});
    await page.locator('#account', { hasText: /Service account: grace@acme\.test/ }).waitFor();
    expect(await page.locator('#folders li').count()).toBeGreaterThan(0);
    expect(await page.locator('#drafts li').count()).toBeGreaterThan(0);
    expect(await page.locator('.card').count()).toBe(10);

    const headphones = await cardNames(page);
    await page.getByLabel('Search for').fill('coffee');
    await page.getByRole('button', { name: 'Search' }).click();
    await cardsChangedFrom(page, headphones);
    const relevance = await cardNames(page);
    await page.getByLabel('Sort by').selectOption('price_asc');
    await cardsChangedFrom(page, relevance);
    expect(new Set(await cardNames(page))).toEqual(new Set(relevance));
    await page.getByRole('button', { name: 'More results' }).click();
    await page.locator('#result-count').getByText('20 products').waitFor();

    expect(seen.consoleErrors).toEqual([]);
    expect(seen.failures).toEqual([]);
    const first = sims.search.requests.find((r) => r.pathname === '/v1/search');
    expect(first?.headers['service-client-token']).toBe(SEARCH_TOKEN);
  });

  it('when a result link is followed, then it goes through the gateway, which answers the redirect and passes the reranked position on', async () => {
    await open({});
    const before = await cardNames(page);
    await page.getByLabel('Sort by').selectOption('price_desc');
    await cardsChangedFrom(page, before);
    const link = page.locator('.card .name').nth(2);
    const href = (await link.getAttribute('href'))!;
    expect(href.startsWith('/api/search/url?')).toBe(true);
    const redirect = page.waitForResponse((r) => r.url().includes('/api/search/url'));
    await link.click();
    const response = await redirect;
    expect(response.status()).toBe(302);
    const target = new URL(href, gw!.gateway.url).searchParams;
    expect(response.headers()['location']).toBe(target.get('u'));
    expect(String(sims.search.clicks.at(-1)?.rp)).toBe(target.get('rp'));
  });

  it('when a product image cannot load, then a placeholder takes its place', async () => {
    await page.route(`${sims.imageOrigin}/**`, (route) => route.abort());
    await open({});
    await page.locator('.card .placeholder').first().waitFor();
    // Each image fails on its own: wait until no card shows one (a bound, not a speed), then
    // every card has its placeholder.
    await page.locator('.card img').first().waitFor({ state: 'detached' });
    expect(await page.locator('.card img').count()).toBe(0);
    expect(await page.locator('.card .placeholder').count()).toBe(
      await page.locator('.card').count(),
    );
  });

  it('when the chat server fails on drafts, then that part shows its problem and the rest of the page works', async () => {
    sims.chat.faults.add({ fault: { kind: 'status', status: 500 }, pathPrefix: '/api/v1/drafts' });
    await open({});
    await page.locator('#drafts .problem', { hasText: 'Bad Gateway (502)' }).waitFor();
    await page.locator('#drafts .problem', { hasText: 'UPSTREAM_ERROR' }).waitFor();
    expect(await page.locator('#folders li').count()).toBeGreaterThan(0);
    expect(await page.locator('.card').count()).toBe(10);
  });
});

describe('the demo page in session mode', () => {
  it('when a user logs in, sets a status wrong and then right, and logs out, then the page shows each step', async () => {
    const seen = await open({ CHAT_AUTH_MODE: 'session', CHAT_EMAIL: '', CHAT_API_KEY: '' });
    await page.locator('#login-form').waitFor();
    expect(await page.locator('#folders li').allTextContents()).toEqual(['None']);
    const admin = sims.chat.credentials('administrator');
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill(admin.password!);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('#account', { hasText: 'Logged in as' }).waitFor();
    expect(await page.locator('#folders li').count()).toBeGreaterThan(0);

    await page.getByLabel('Status text').fill('x'.repeat(61));
    await page.getByRole('button', { name: 'Set status' }).click();
    await page
      .locator('#status_text-error', { hasText: 'status_text must be at most 60 characters' })
      .waitFor();
    await page.locator('#status-result', { hasText: 'VALIDATION_FAILED' }).waitFor();

    await page.getByLabel('Status text').fill('Out for lunch');
    await page.getByRole('button', { name: 'Set status' }).click();
    await page.locator('#status-result', { hasText: 'Status set.' }).waitFor();
    expect(sims.chat.requests.some((r) => r.pathname === '/api/v1/users/4/status')).toBe(true);

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.locator('#login-form').waitFor();
    // The one 4xx is the invalid status the test sent on purpose; nothing else failed.
    expect(seen.failures.map((f) => f.split(' ')[0])).toEqual(['400']);
    expect(seen.consoleErrors.filter((e) => !e.includes('400'))).toEqual([]);
  });
});

/** The first folder the page shows, as the chat simulator holds it. */
function firstFolder() {
  return [...sims.chat.realm.channelFolders]
    .filter((f) => !f.isArchived)
    .sort((x, y) => x.order - y.order || x.id - y.id)[0]!;
}

/** Waits until the page's folder list shows `name` (the stream's event redrew it). */
const folderShown = (name: string) =>
  page.locator('#folders li', { hasText: name }).waitFor({ timeout: 15_000 });

describe('the demo page follows the folders live (GET /api/events)', () => {
  it('when a folder is renamed on the chat server, then the page shows the new name without a reload (service mode)', async () => {
    const seen = await open({ CHAT_EVENTS: 'on' });
    const folder = firstFolder();
    await folderShown(folder.name);
    await sims.chat.received((r) => r.pathname === '/api/v1/events');
    sims.chat.control.updateChannelFolder(folder.id, { name: 'Renamed live (service)' });
    await folderShown('Renamed live (service)');
    expect(seen.failures).toEqual([]);
    expect(seen.consoleErrors).toEqual([]);
    // The page was not reloaded: the search it ran at the start is still there.
    expect(await page.locator('.card').count()).toBeGreaterThan(0);
  });

  it('when a folder is renamed while a user is logged in, then the page shows the new name without a reload (session mode)', async () => {
    const seen = await open({ CHAT_AUTH_MODE: 'session', CHAT_EVENTS: 'on' });
    await page.locator('#login-form').waitFor();
    const admin = sims.chat.credentials('administrator');
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill(admin.password!);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('#account', { hasText: 'Logged in as' }).waitFor();
    const folder = firstFolder();
    await folderShown(folder.name);
    await sims.chat.received((r) => r.pathname === '/api/v1/events');
    sims.chat.control.updateChannelFolder(folder.id, { name: 'Renamed live (session)' });
    await folderShown('Renamed live (session)');
    expect(seen.failures).toEqual([]);
    expect(seen.consoleErrors).toEqual([]);
  });

  it('when the gateway restarts, then the page reconnects by itself and follows the folders again', async () => {
    await open({ CHAT_EVENTS: 'on' });
    const folder = firstFolder();
    await folderShown(folder.name);
    const { port } = new URL(gw!.gateway.url);
    await gw!.close();
    gw = await createTestGateway({
      searchOrigin: sims.searchOrigin,
      chatOrigin: sims.chatOrigin,
      env: {
        PORT: port,
        STATIC_DIR: PAGE_DIR,
        STATIC_IMG_SRC: `'self' data: ${sims.imageOrigin}`,
        SEARCH_LINKS: 'gateway',
        CHAT_AUTH_MODE: 'service',
        CHAT_EVENTS: 'on',
        CHAT_EMAIL: sims.chat.credentials('administrator').email,
        CHAT_API_KEY: sims.chat.credentials('administrator').apiKey,
      },
    });
    // The page's stream is back on the new gateway before the change is made.
    await eventually(
      async () =>
        /^gateway_event_streams 1$/m.test(await (await fetch(`${gw!.gateway.url}/metrics`)).text()),
      { what: 'the page reopening its event stream', timeoutMs: 30_000 },
    );
    await sims.chat.received((r) => r.pathname === '/api/v1/events');
    sims.chat.control.updateChannelFolder(folder.id, { name: 'Renamed after a restart' });
    await folderShown('Renamed after a restart');
  });
});
