// End to end: the GUI's policy pages (docs/gui.md, Policies) in real Chromium against the built
// mesh-zone binary, with a mesh, proxies and policies written through the API: the Policies page
// lists every kind, targetRef kinds apart, with each policy's target; a policy's page shows it as
// YAML and the proxies it affects; changes made through the API show on the open pages.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkAndCapture, GuiBrowser, textOf, type OpenPage } from './testing/gui.js';
import { startControlPlane } from './testing/process.js';
import { callApi, putResource } from './testing/xds-fixtures.js';

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

let cp: Instance;
let gui: GuiBrowser;

const api = (method: string, path: string, body?: unknown) => callApi(cp.url, method, path, body);
const put = (path: string, body: Record<string, unknown>) => putResource(cp.url, path, body);

const sidecar = (name: string, address: string, service: string) => ({
  type: 'Dataplane',
  mesh: 'shop',
  name,
  networking: { address, inbound: [{ port: 8080, tags: { 'mesh.io/service': service, 'mesh.io/protocol': 'http' } }] },
});

const meshTimeout = (connectionTimeout: string) => ({
  type: 'MeshTimeout',
  mesh: 'shop',
  name: 'web-to-backend',
  spec: { targetRef: { kind: 'MeshService', name: 'web' }, to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { connectionTimeout } }] },
});

beforeAll(async () => {
  cp = await startControlPlane();
  await put('/meshes/shop', { type: 'Mesh', name: 'shop' });
  await put('/meshes/shop/dataplanes/web-1', sidecar('web-1', '10.0.0.1', 'web'));
  await put('/meshes/shop/dataplanes/backend-1', sidecar('backend-1', '10.0.0.2', 'backend'));
  await put('/meshes/shop/meshtimeouts/web-to-backend', meshTimeout('3s'));
  await put('/meshes/shop/traffic-permissions/to-backend', {
    type: 'TrafficPermission',
    mesh: 'shop',
    name: 'to-backend',
    sources: [{ match: { 'mesh.io/service': '*' } }],
    destinations: [{ match: { 'mesh.io/service': 'backend' } }],
  });
  gui = await GuiBrowser.launch();
}, 120_000);

afterEach(async () => {
  await gui?.closePages();
});

afterAll(async () => {
  await gui?.close();
  await cp?.stop();
}, 60_000);

const open = (path: string): Promise<OpenPage> => gui.open(`${cp.url}/gui${path}`);

describe('the policy pages of the GUI in Chromium', () => {
  it('lists every policy kind of a mesh, targetRef kinds apart, with each policy and its target', { timeout: 120_000 }, async () => {
    const kinds = (await api('GET', '/policies')).json.policies as Array<{ name: string; isTargetRefBased: boolean }>;
    const opened = await open('/meshes/shop/policies');
    const { page } = opened;
    expect(await textOf(page, '[data-testid="policy-row-MeshTimeout-web-to-backend"]', (text) => text.includes('MeshService web'))).toContain('web-to-backend');
    expect(await textOf(page, '[data-testid="policy-row-TrafficPermission-to-backend"]', (text) => text.includes('to-backend'))).toContain('to-backend');
    for (const kind of kinds) await page.locator(`[data-testid="policy-kind-${kind.name}"]`).waitFor();
    // The targetRef kinds come first, under their own heading; the older kinds after the second one.
    const order = await page.locator('main h2, main section[data-testid^="policy-kind-"]').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-testid') ?? node.textContent));
    const olderHeading = order.indexOf('Older policies');
    expect(order[0]).toBe('targetRef policies');
    for (const kind of kinds) expect(order.indexOf(`policy-kind-${kind.name}`) > olderHeading, kind.name).toBe(!kind.isTargetRefBased);
    expect(await textOf(page, '[data-testid="policy-kind-MeshRetry"] [data-testid="no-policies"]', (text) => text.length > 0)).toBe('No Mesh Retries.');

    // A policy written through the API appears on the open page.
    await put('/meshes/shop/meshretries/retry-backend', {
      type: 'MeshRetry',
      mesh: 'shop',
      name: 'retry-backend',
      spec: { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { http: { numRetries: 2 } } }] },
    });
    expect(await textOf(page, '[data-testid="policy-row-MeshRetry-retry-backend"]', (text) => text.includes('Mesh'))).toContain('retry-backend');
    await checkAndCapture(opened, 'policies');
  });

  it('shows a targetRef policy as YAML with the proxies it selects, kept current', { timeout: 120_000 }, async () => {
    const opened = await open('/meshes/shop/policies/meshtimeouts/web-to-backend');
    const { page } = opened;
    expect(await textOf(page, '[data-testid="policy-yaml"]', (text) => text.includes('connectionTimeout'))).toContain('connectionTimeout: 3s');
    expect(await textOf(page, '[data-testid="policy-target"]', (text) => text.length > 0)).toBe('MeshService web');
    expect(await textOf(page, '[data-testid="policy-dataplanes-total"]', (text) => text.startsWith('1 '))).toBe('1 proxy.');
    await page.locator('[data-testid="policy-dataplane-web-1"]').waitFor();

    // A new proxy of the service it selects, and a change of the policy, show without a reload.
    await put('/meshes/shop/dataplanes/web-2', sidecar('web-2', '10.0.0.3', 'web'));
    expect(await textOf(page, '[data-testid="policy-dataplanes-total"]', (text) => text.startsWith('2 '))).toBe('2 proxies.');
    await page.locator('[data-testid="policy-dataplane-web-2"]').waitFor();
    await put('/meshes/shop/meshtimeouts/web-to-backend', meshTimeout('7s'));
    expect(await textOf(page, '[data-testid="policy-yaml"]', (text) => text.includes('7s'))).toContain('connectionTimeout: 7s');
    await checkAndCapture(opened, 'policy-targetref');
  });

  it('shows an older policy with the proxies it attaches to', { timeout: 120_000 }, async () => {
    const opened = await open('/meshes/shop/policies/traffic-permissions/to-backend');
    const { page } = opened;
    expect(await textOf(page, '[data-testid="policy-yaml"]', (text) => text.includes('destinations'))).toContain("mesh.io/service: backend");
    await page.locator('[data-testid="policy-dataplane-backend-1"]').waitFor();
    expect(await page.locator('[data-testid="policy-target"]').count()).toBe(0);
    await checkAndCapture(opened, 'policy-older');
  });

  it('says a policy that does not exist, or is deleted while open, is not found', { timeout: 120_000 }, async () => {
    await put('/meshes/shop/meshtimeouts/short-lived', { ...meshTimeout('1s'), name: 'short-lived' });
    const { page } = await open('/meshes/shop/policies/meshtimeouts/short-lived');
    await textOf(page, '[data-testid="policy-yaml"]', (text) => text.includes('short-lived'));
    expect((await api('DELETE', '/meshes/shop/meshtimeouts/short-lived')).status).toBe(200);
    expect(await textOf(page, 'main', (text) => text.includes('does not exist'))).toContain('Mesh Timeout short-lived does not exist.');

    const { page: unknownKind } = await open('/meshes/shop/policies/no-such-kinds/x');
    expect(await textOf(unknownKind, 'main', (text) => text.includes('does not exist'))).toContain('Policy kind no-such-kinds does not exist.');
  });
});
