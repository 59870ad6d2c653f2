import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulators, type RunningSimulators } from '../../simulators/start-simulators.js';
import { launchBrowser, watch } from '../helpers/browser.js';
import { SEARCH_TOKEN, createTestGateway, type TestGateway } from '../helpers/test-gateway.js';

/*
 * /docs as a person opens it (contract section 2): Swagger UI in a real browser, every asset
 * from the gateway itself (the browser is kept off every other host), under the page's CSP.
 */

let sims: RunningSimulators;
let browser: Browser;
let gw: TestGateway;

beforeAll(async () => {
  sims = await startSimulators({ clientToken: SEARCH_TOKEN });
  browser = await launchBrowser();
  gw = await createTestGateway({ searchOrigin: sims.searchOrigin, chatOrigin: sims.chatOrigin });
});
afterAll(async () => {
  await gw?.close();
  await browser?.close();
  await sims?.close();
});

describe('/docs in a browser', () => {
  it('when /docs is opened, then every route is listed, from local assets, with no console error', async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    await page.route(/^https?:\/\/(?!127\.0\.0\.1)/, (route) => {
      elsewhere.push(route.request().url());
      return route.abort();
    });
    const seen = watch(page);
    await page.goto(new URL('/docs', gw.gateway.url).href);
    await page.locator('.opblock-summary-path', { hasText: '/api/search' }).first().waitFor();
    const paths = await page.locator('.opblock-summary-path').allTextContents();
    const clean = paths.map((p) => p.replace(/\u200b/g, ''));
    for (const route of ['/api/search', '/api/bootstrap', '/api/auth/login', '/metrics']) {
      expect(clean).toContain(route);
    }
    await page.close();
    expect(seen.consoleErrors).toEqual([]);
    expect(seen.failures).toEqual([]);
    expect(elsewhere).toEqual([]);
  });
});
