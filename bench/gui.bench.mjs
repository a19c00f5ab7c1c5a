// GUI benchmark (bench/README.md, GUI): how long the proxies list of a mesh of 10,000 proxies takes
// to show its first page in Chromium, from the start of a navigation to the first row on screen,
// and the same for a baseline: a static HTML page of the same rows served by node:http, which is
// what showing them costs the browser alone. Prints figures beside the target (1 s) and the
// ratios to the baseline; asserts nothing.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { children, quantile, startZone } from './common.mjs';

const PROXIES = Number(process.env.BENCH_PROXIES ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const IN_FLIGHT = 8;
const TARGET_MS = 1000;

// playwright-core is a development dependency of the end-to-end tests' package.
const { chromium } = createRequire(new URL('../apps/zone/package.json', import.meta.url))('playwright-core');

const dataplane = (i) => {
  const name = `dp-${String(i).padStart(5, '0')}`;
  return {
    name,
    body: {
      type: 'Dataplane',
      mesh: 'default',
      name,
      networking: { address: `10.${(i >> 8) & 255}.${i & 255}.1`, inbound: [{ port: 8080, tags: { 'mesh.io/service': `svc-${i % 100}`, version: `v${i % 3}` } }] },
    },
  };
};

async function load(url) {
  let next = 0;
  const worker = async () => {
    while (next < PROXIES) {
      const { name, body } = dataplane(next++);
      const res = await fetch(`${url}/meshes/default/dataplanes/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await res.arrayBuffer();
      if (res.status >= 300) throw new Error(`PUT ${name}: ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

const fmt = (ms) => `${Math.round(ms)} ms`;

const median = (times) => quantile([...times].sort((a, b) => a - b), 0.5);

/** A row of the table: the GUI's figures, then the baseline's median and the ratio of the medians. */
function summary(label, times, baselineTimes) {
  const sorted = [...times].sort((a, b) => a - b);
  const max = sorted.at(-1);
  const compared = baselineTimes ? `${fmt(median(baselineTimes))} | ${(median(times) / median(baselineTimes)).toFixed(1)}×` : '— | —';
  return `| ${label} | ${fmt(median(times))} | ${fmt(quantile(sorted, 0.9))} | ${fmt(max)} | ${max < TARGET_MS ? 'yes' : 'no'} | ${compared} |`;
}

const zone = await startZone();
const loadStarted = performance.now();
await load(zone.url);
console.log(`${PROXIES} dataplanes loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);

const browser = await chromium.launch({ executablePath: process.env.BENCH_CHROMIUM ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
const listPath = '/gui/meshes/default/data-plane-proxies';

/**
 * Run in every page before its own scripts (through the browser's debugging protocol, which the
 * page's security policy does not govern): the page's own clock reading when the first row of the
 * list is in the document, so that what the browser harness itself costs is not counted.
 */
const RECORD_FIRST_ROW = `new MutationObserver((_, observer) => {
  if (document.querySelector('[data-testid^="proxy-row-"]')) {
    window.firstRowAt = performance.now();
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });`;

/** Polled: waiting inside the page would evaluate code the page's policy refuses. */
async function firstRowAt(page) {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 20))) {
    const at = await page.evaluate('window.firstRowAt');
    if (at !== undefined) return at;
  }
  throw new Error('the list showed no row within 30 s');
}

/** A page load of `url` in a new tab (its cache is the context's): from the start of the navigation (the page's clock's 0) to the first row. */
async function loadList(context, url) {
  const page = await context.newPage();
  await page.goto(url, { waitUntil: 'commit' });
  const elapsed = await firstRowAt(page);
  await page.close();
  return elapsed;
}

/** The list's table as the GUI renders it: its rows are the first page of the mesh's proxies. */
async function renderedTable() {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${zone.url}${listPath}`);
  await page.locator('[data-testid^="proxy-row-"]').first().waitFor();
  const table = await page.locator('table:has([data-testid^="proxy-row-"])').evaluate((element) => element.outerHTML);
  await context.close();
  return table;
}

/** The baseline: one static page of those rows from node:http, revalidated as the GUI's `index.html` is. */
async function startBaseline(table) {
  const html = `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Data plane proxies</title></head><body><main><h1>Data plane proxies</h1>${table}</main></body></html>\n`;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' });
    res.end(html);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}/` };
}

const baseline = await startBaseline(await renderedTable());
const cold = [];
const warm = [];
const inApp = [];
const baselineCold = [];
const baselineWarm = [];
for (let run = 0; run < RUNS; run++) {
  // A new context each run: nothing cached, as a first visit. The baseline's runs alternate with the GUI's, so
  // that both see the machine alike.
  const context = await browser.newContext();
  await context.addInitScript(RECORD_FIRST_ROW);
  cold.push(await loadList(context, `${zone.url}${listPath}`));
  warm.push(await loadList(context, `${zone.url}${listPath}`));
  const baselineContext = await browser.newContext();
  await baselineContext.addInitScript(RECORD_FIRST_ROW);
  baselineCold.push(await loadList(baselineContext, baseline.url));
  baselineWarm.push(await loadList(baselineContext, baseline.url));
  await baselineContext.close();
  // From the home page, a click on the navigation: the app is loaded, the list's chunk is not.
  const page = await context.newPage();
  await page.goto(`${zone.url}/gui/`);
  await page.locator('[data-testid="proxies-standard"] .figure').waitFor();
  const clickedAt = await page.evaluate('performance.now()');
  await page.getByRole('link', { name: 'Data plane proxies' }).click();
  inApp.push((await firstRowAt(page)) - clickedAt);
  const total = await page.locator('[data-testid="proxies-total"]').textContent();
  if (run === 0) console.log(`the list says: ${total?.trim()}`);
  await context.close();
}

console.log(`\nThe first page (50 rows) of the proxies list of a mesh of ${PROXIES} proxies, ${RUNS} runs each:\n`);
console.log('| navigation | median | p90 | slowest | under 1 s | baseline median | ratio |');
console.log('|---|---|---|---|---|---|---|');
console.log(summary('first visit (nothing cached), URL typed in', cold, baselineCold));
console.log(summary('again in a new tab (assets cached)', warm, baselineWarm));
console.log(summary('from the home page, by the navigation link', inApp));

await browser.close();
baseline.server.close();
for (const child of children) child.kill('SIGTERM');
