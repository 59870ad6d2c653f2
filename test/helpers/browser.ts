import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Debian's Chromium, headless, driven by playwright-core (which downloads no browser). The
 * flags keep it off the network (this machine's is closed) and allow running as root.
 */
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/** What a page said and fetched that normal use must never show: console errors and 4xx/5xx. */
export function watch(page: Page) {
  const consoleErrors: string[] = [];
  const failures: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(String(error)));
  page.on('response', (response) => {
    if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
  });
  return { consoleErrors, failures };
}
