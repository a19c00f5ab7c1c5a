// The GUI's end-to-end tests in real Chromium (docs/gui.md, Tests): pages opened while watching
// for console errors and failed requests, axe-core's serious and critical violations, screenshots
// under test-results/gui/.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { eventually } from './envoy.js';

const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'test-results', 'gui');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface OpenPage {
  page: Page;
  /** Console errors, uncaught exceptions, failed requests and error answers, as they came. */
  problems: string[];
}

/** Headless Chromium with one browsing context, as one user's browser. */
export class GuiBrowser {
  private constructor(
    private readonly browser: Browser,
    readonly context: BrowserContext,
  ) {}

  static async launch(): Promise<GuiBrowser> {
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
    mkdirSync(SCREENSHOTS, { recursive: true });
    return new GuiBrowser(browser, await browser.newContext({ viewport: { width: 1280, height: 900 } }));
  }

  /** Opens a page of the GUI by its URL, watching for what must not happen. */
  async open(url: string): Promise<OpenPage> {
    const page = await this.context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
    // Leaving a page aborts its change stream: that is no failure.
    page.on('requestfailed', (request) => {
      if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
    });
    await page.goto(url);
    return { page, problems };
  }

  /** Closes the open pages: one left open by a failed test would hold one of the browser's six connections to the API. */
  async closePages(): Promise<void> {
    for (const page of this.context.pages()) await page.close();
  }

  close(): Promise<void> {
    return this.browser.close();
  }
}

/** Waits until the element's text, trimmed, passes the check. */
export async function textOf(page: Page, selector: string, check: (text: string) => boolean, timeoutMs = 30_000): Promise<string> {
  return eventually(async () => ((await page.locator(selector).first().textContent({ timeout: 1000 })) ?? '').trim(), check, `${selector} on ${page.url()}`, timeoutMs);
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated through the browser's debugging protocol, which the page's security policy does not govern.
  await page.evaluate(axeSource);
  // Expressions run in the page, as text: this package's types know no DOM.
  return page.evaluate<string[]>(`axe.run(document).then((result) => result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => violation.id + ' (' + violation.impact + '): ' + JSON.stringify(violation.nodes.map((node) => node.target))))`);
}

/**
 * The checks of every page once its data shows: live (or, for a page of nothing that changes,
 * without a connection), accessible, nothing failed; then its screenshot, `<name>.png`.
 */
export async function checkAndCapture(opened: OpenPage, name: string, liveState: 'live' | 'idle' = 'live'): Promise<void> {
  const { page, problems } = opened;
  await page.locator(`.live[data-state="${liveState}"]`).waitFor({ timeout: 30_000 });
  expect(await accessibilityViolations(page), name).toEqual([]);
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  expect(problems, name).toEqual([]);
  await page.close();
}
