// End to end: editing in the GUI (docs/gui.md, Editing) in real Chromium against the built
// mesh-zone binary: a MeshTimeout created from YAML shows on its page and through the API, is
// changed, refused with the error at the line of its invalid field (nothing stored), and deleted
// after a confirmation that Cancel leaves alone; a Mesh and an external service are created the
// same way; a read-only API leaves no edit control, and says why.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './testing/envoy.js';
import { accessibilityViolations, checkAndCapture, GuiBrowser, textOf, type OpenPage } from './testing/gui.js';
import { startControlPlane } from './testing/process.js';
import { callApi, putResource } from './testing/xds-fixtures.js';

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

let cp: Instance;
let gui: GuiBrowser;

const api = (method: string, path: string, body?: unknown) => callApi(cp.url, method, path, body);
/** Where checkAndCapture writes its screenshots, for those taken mid-test. */
const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test-results', 'gui');
const open = (path: string): Promise<OpenPage> => gui.open(`${cp.url}/gui${path}`);

const WEB_TIMEOUT = `type: MeshTimeout
mesh: shop
name: web-timeout
spec:
  targetRef:
    kind: Mesh
  to:
    - targetRef:
        kind: MeshService
        name: backend
      default:
        http:
          requestTimeout: 15s
`;

beforeAll(async () => {
  cp = await startControlPlane();
  await putResource(cp.url, '/meshes/shop', { type: 'Mesh', name: 'shop' });
  gui = await GuiBrowser.launch();
}, 120_000);

afterEach(async () => {
  await gui?.closePages();
});

afterAll(async () => {
  await gui?.close();
  await cp?.stop();
}, 60_000);

/** Replaces the editor's text once it shows what the page starts from. */
async function replaceYaml(page: Page, startsWith: (text: string) => boolean, yaml: string): Promise<void> {
  const editor = page.locator('[data-testid="yaml-text"]');
  await eventually(() => editor.inputValue(), startsWith, 'the editor', 30_000);
  await editor.fill(yaml);
}

/** Waits for the URL of the page the GUI goes to after a save or a delete. */
const arrivesAt = (page: Page, path: string) => page.waitForURL(`${cp.url}/gui${path}`, { timeout: 30_000 });

describe('editing in the GUI in Chromium', () => {
  it('creates a MeshTimeout from the kind’s example, then shows it on its page and through the API', { timeout: 120_000 }, async () => {
    const opened = await open('/meshes/shop/policies');
    const { page } = opened;
    await page.locator('[data-testid="create-MeshTimeout"]').click();
    await arrivesAt(page, '/new/meshes/shop/meshtimeouts');
    // The documented example, placed in the page's mesh.
    await replaceYaml(page, (text) => text.startsWith('type: MeshTimeout\nmesh: shop\nname: '), WEB_TIMEOUT);
    await page.locator('[data-testid="save"]').click();

    await arrivesAt(page, '/meshes/shop/policies/meshtimeouts/web-timeout');
    expect(await textOf(page, '[data-testid="policy-yaml"]', (text) => text.includes('requestTimeout'))).toContain('requestTimeout: 15s');
    const stored = await api('GET', '/meshes/shop/meshtimeouts/web-timeout');
    expect(stored.status).toBe(200);
    expect(stored.json.spec.to[0]).toEqual({ targetRef: { kind: 'MeshService', name: 'backend' }, default: { http: { requestTimeout: '15s' } } });
    await checkAndCapture(opened, 'edit-created');
  });

  it('shows the API’s error at the line of the invalid field and stores nothing, then saves a valid change', { timeout: 120_000 }, async () => {
    await putResource(cp.url, '/meshes/shop/meshtimeouts/web-timeout', { type: 'MeshTimeout', mesh: 'shop', name: 'web-timeout', spec: { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { http: { requestTimeout: '15s' } } }] } });
    const opened = await open('/meshes/shop/policies/meshtimeouts/web-timeout');
    const { page } = opened;
    await page.locator('[data-testid="edit-web-timeout"]').click();
    await arrivesAt(page, '/edit/meshes/shop/meshtimeouts/web-timeout');
    // The stored resource, without the times the control plane keeps.
    const editor = page.locator('[data-testid="yaml-text"]');
    const stored = await eventually(() => editor.inputValue(), (text) => text.includes('requestTimeout: 15s'), 'the editor', 30_000);
    expect(stored).not.toContain('creationTime');

    const invalid = stored.replace('requestTimeout: 15s', 'requestTimeout: -1s');
    const line = invalid.split('\n').findIndex((text) => text.includes('requestTimeout')) + 1;
    await editor.fill(invalid);
    await page.locator('[data-testid="save"]').click();
    const problem = await textOf(page, `[data-testid="problem-line-${line}"]`, (text) => text.includes('requestTimeout'));
    expect(problem).toContain(`Line ${line}`);
    expect(problem).toContain('spec.to[0].default.http.requestTimeout');
    expect(await page.locator('.yaml-gutter .has-problem').allTextContents()).toEqual([String(line)]);
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    expect((await api('GET', '/meshes/shop/meshtimeouts/web-timeout')).json.spec.to[0].default.http.requestTimeout).toBe('15s');
    // The refused PUT is the one request that failed.
    expect(opened.problems).toEqual([expect.stringMatching(/^400: .*\/meshes\/shop\/meshtimeouts\/web-timeout$/), expect.stringMatching(/^console: Failed to load resource: .*400/)]);
    opened.problems.length = 0;

    // Choosing the problem puts the cursor on its line.
    await page.locator(`[data-testid="problem-line-${line}"] button`).click();
    expect(await editor.evaluate((area) => (area as unknown as { value: string; selectionStart: number }).value.slice(0, (area as unknown as { selectionStart: number }).selectionStart).split('\n').length)).toBe(line);
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'edit-invalid.png'), fullPage: true });

    // A YAML syntax error shows at its line, before any request.
    await editor.fill('type: MeshTimeout\nmesh: shop\nname: web-timeout\nspec:\n  - a\n  b: c\n');
    await page.locator('[data-testid="save"]').click();
    await textOf(page, '[data-testid="problem-line-6"]', (text) => text.includes('Line 6'));

    await editor.fill(stored.replace('requestTimeout: 15s', 'requestTimeout: 20s'));
    await page.locator('[data-testid="save"]').click();
    await arrivesAt(page, '/meshes/shop/policies/meshtimeouts/web-timeout');
    expect(await textOf(page, '[data-testid="policy-yaml"]', (text) => text.includes('20s'))).toContain('requestTimeout: 20s');
    expect((await api('GET', '/meshes/shop/meshtimeouts/web-timeout')).json.spec.to[0].default.http.requestTimeout).toBe('20s');
    await checkAndCapture(opened, 'edit-changed');
  });

  it('deletes only once confirmed: Cancel keeps the policy, Delete removes it and goes back to the list', { timeout: 120_000 }, async () => {
    await putResource(cp.url, '/meshes/shop/meshtimeouts/doomed', { type: 'MeshTimeout', mesh: 'shop', name: 'doomed', spec: { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'Mesh' }, default: { idleTimeout: '1h' } }] } });
    const opened = await open('/meshes/shop/policies/meshtimeouts/doomed');
    const { page } = opened;
    const dialog = page.locator('[data-testid="delete-dialog"]');

    // By keyboard: the button opens the dialog, which names the policy and starts on Cancel.
    await page.locator('[data-testid="delete-doomed"]').focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'visible' });
    expect(await textOf(page, '[data-testid="delete-dialog"] h2', (text) => text.length > 0)).toBe('Delete Mesh Timeout doomed?');
    expect(await page.evaluate('document.activeElement?.dataset?.testid')).toBe('delete-cancel');
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'edit-delete-dialog.png'), fullPage: true });
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    expect((await api('GET', '/meshes/shop/meshtimeouts/doomed')).status).toBe(200);

    await page.locator('[data-testid="delete-doomed"]').click();
    await page.locator('[data-testid="delete-confirm"]').click();
    await arrivesAt(page, '/meshes/shop/policies');
    await page.locator('[data-testid="policy-kind-MeshTimeout"]').waitFor();
    expect(await page.locator('[data-testid="policy-row-MeshTimeout-doomed"]').count()).toBe(0);
    expect((await api('GET', '/meshes/shop/meshtimeouts/doomed')).status).toBe(404);
    await checkAndCapture(opened, 'edit-deleted');
  });

  it('creates a Mesh and an external service from YAML', { timeout: 120_000 }, async () => {
    const opened = await open('/meshes');
    const { page } = opened;
    await page.locator('[data-testid="create-Mesh"]').click();
    await arrivesAt(page, '/new/meshes');
    await replaceYaml(page, (text) => text.startsWith('type: Mesh\n'), 'type: Mesh\nname: payments\n');
    await page.locator('[data-testid="save"]').click();
    await arrivesAt(page, '/meshes/payments');
    await page.locator('[data-testid="mesh-proxies"]').waitFor();
    expect((await api('GET', '/meshes/payments')).status).toBe(200);

    await page.goto(`${cp.url}/gui/meshes/payments/services`);
    await page.locator('[data-testid="create-ExternalService"]').click();
    await arrivesAt(page, '/new/meshes/payments/external-services');
    await replaceYaml(page, (text) => text.startsWith('type: ExternalService\nmesh: payments\n'), `type: ExternalService
mesh: payments
name: httpbin
networking:
  address: httpbin.org:443
  tls:
    enabled: true
tags:
  mesh.io/service: httpbin
`);
    await page.locator('[data-testid="save"]').click();
    await arrivesAt(page, '/meshes/payments/services');
    expect(await textOf(page, '[data-testid="external-row-httpbin"]', (text) => text.includes('httpbin.org'))).toContain('httpbin.org:443');
    expect((await api('GET', '/meshes/payments/external-services/httpbin')).json.networking.address).toBe('httpbin.org:443');
    await checkAndCapture(opened, 'edit-external-service');
  });

  it('offers no edit control on a read-only API, and says why', { timeout: 180_000 }, async () => {
    const readOnly = await startControlPlane({ env: { MESH_API_SERVER_READ_ONLY: 'true' } });
    try {
      // The default mesh's own policies are there without a write.
      expect((await callApi(readOnly.url, 'GET', '/meshes/default/traffic-permissions/allow-all-default')).status).toBe(200);
      const pages = [
        '/meshes',
        '/meshes/default',
        '/meshes/default/policies',
        '/meshes/default/policies/traffic-permissions/allow-all-default',
        '/meshes/default/services',
        '/new/meshes/default/meshtimeouts',
        '/edit/meshes/default',
      ];
      for (const path of pages) {
        const opened = await gui.open(`${readOnly.url}/gui${path}`);
        const { page } = opened;
        expect(await textOf(page, '[data-testid="write-denied"]', (text) => text.length > 0), path).toContain('apiServer.readOnly');
        const controls = page.locator('[data-testid^="create-"], [data-testid^="edit-"], [data-testid^="delete-"], [data-testid="save"], [data-testid="yaml-text"]');
        expect(await controls.count(), path).toBe(0);
        if (path === '/meshes/default/policies') await checkAndCapture(opened, 'edit-read-only');
        else await page.close();
      }
    } finally {
      await readOnly.stop();
    }
  });
});
