// End to end: the web GUI (docs/gui.md) in real Chromium against the built mesh-zone binary, with
// seeded meshes, proxies and policies and two proxies run by real Envoy. Every page opens with its
// data, logs no console error and makes no failed request, and axe-core finds no serious or
// critical violation on it; a change made through the API shows on an open page; the serving
// rules (cache lifetimes, security policy, history fallback, `GET /`) hold. Screenshots of every
// page go to test-results/gui/.
import type { Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_DATAPLANE, clientDataplane, eventually, requireEnvoy, startApp, startMeshDataplane, type DataplaneProcess } from './testing/envoy.js';
import { checkAndCapture, GuiBrowser, textOf, type OpenPage } from './testing/gui.js';
import { freePort, startControlPlane, zoneOf } from './testing/process.js';
import { callApi, putResource } from './testing/xds-fixtures.js';

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

const envoy = requireEnvoy('gui');

let cp: Instance;
let gui: GuiBrowser;
const proxies: DataplaneProcess[] = [];
const apps: Server[] = [];

const api = (method: string, path: string, body?: unknown) => callApi(cp.url, method, path, body);
const put = (path: string, body: Record<string, unknown>) => putResource(cp.url, path, body);

const sidecar = (name: string, address: string, service: string) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: { address, inbound: [{ port: 8080, tags: { 'mesh.io/service': service, 'mesh.io/protocol': 'http', version: 'v1' } }] },
});

beforeAll(async () => {
  if (!envoy) return;
  cp = await startControlPlane({ env: { MESH_DP_SERVER_PORT: String(await freePort()), MESH_XDS_SERVER_DATAPLANE_STATUS_FLUSH_INTERVAL: '1s' } });
  await put('/meshes/payments', { type: 'Mesh', name: 'payments', mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } });
  // Its proxies get certificates, which their pages show.
  await put('/meshes/default', { type: 'Mesh', name: 'default', mtls: { enabledBackend: 'builtin-ca', backends: [{ name: 'builtin-ca', type: 'builtin' }] } });
  await put('/meshes/default/dataplanes/offline-1', sidecar('offline-1', '10.0.0.9', 'billing'));
  await put('/meshes/default/dataplanes/edge-gateway', { type: 'Dataplane', mesh: 'default', name: 'edge-gateway', networking: { address: '10.0.0.20', gateway: { type: 'BUILTIN', tags: { 'mesh.io/service': 'edge' } } } });
  await put('/meshes/default/meshgateways/edge', {
    type: 'MeshGateway',
    mesh: 'default',
    name: 'edge',
    selectors: [{ match: { 'mesh.io/service': 'edge' } }],
    conf: { listeners: [{ port: 8080, protocol: 'HTTP' }] },
  });
  await put('/meshes/default/meshgatewayroutes/edge-to-backend', {
    type: 'MeshGatewayRoute',
    mesh: 'default',
    name: 'edge-to-backend',
    selectors: [{ match: { 'mesh.io/service': 'edge' } }],
    conf: { http: { rules: [{ matches: [{ path: { match: 'PREFIX', value: '/' } }], backends: [{ destination: { 'mesh.io/service': 'backend' } }] }] } },
  });
  await put('/meshes/default/dataplanes/kong-1', { type: 'Dataplane', mesh: 'default', name: 'kong-1', networking: { address: '10.0.0.21', gateway: { tags: { 'mesh.io/service': 'kong' } } } });
  await put('/meshes/default/meshtimeouts/web-to-backend', {
    type: 'MeshTimeout',
    mesh: 'default',
    name: 'web-to-backend',
    spec: { targetRef: { kind: 'MeshService', name: 'web' }, to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { connectionTimeout: '3s' } }] },
  });
  const backendApp = await startApp('backend v1');
  const webApp = await startApp('web');
  apps.push(backendApp.server, webApp.server);
  proxies.push(await startMeshDataplane(cp, envoy, BACKEND_DATAPLANE, { name: 'backend-1', port: String(await freePort()), appPort: String(backendApp.port), version: 'v1' }));
  proxies.push(await startMeshDataplane(cp, envoy, clientDataplane('web', { backend: 'outboundPort' }), { name: 'web-1', port: String(await freePort()), appPort: String(webApp.port), outboundPort: String(await freePort()) }));
  await eventually(
    async () => (await api('GET', '/mesh-insights/default')).json?.dataplanesByType?.standard?.online,
    (online) => online === 2,
    'both Envoy proxies online',
    60_000,
  );
  gui = await GuiBrowser.launch();
}, 180_000);

afterEach(async () => {
  await gui?.closePages();
});

afterAll(async () => {
  await gui?.close();
  await Promise.all(proxies.map((proxy) => proxy.stop()));
  for (const server of apps) server.close();
  await cp?.stop();
}, 60_000);

/** Opens a page of the GUI, at its path under the GUI's base path. */
const open = (path: string, baseUrl = cp.url): Promise<OpenPage> => gui.open(`${baseUrl}/gui${path}`);

describe.skipIf(!envoy)('the GUI in Chromium', () => {
  it('shows the home page: proxies by type and status, services, policies, meshes', async () => {
    const opened = await open('/');
    const { page } = opened;
    expect(await textOf(page, '[data-testid="proxies-standard"] [data-testid="online"]', (text) => text === '2')).toBe('2');
    expect(await textOf(page, '[data-testid="proxies-standard"] .figure', (text) => text === '3')).toBe('3');
    expect(await textOf(page, '[data-testid="proxies-gatewayBuiltin"] .figure', (text) => text === '1')).toBe('1');
    expect(await textOf(page, '[data-testid="proxies-gatewayDelegated"] [data-testid="offline"]', (text) => text === '1')).toBe('1');
    expect(await textOf(page, '[data-testid="mesh-row-payments"]', (text) => text.includes('payments'))).toContain('0 of 0');
    expect(Number(await textOf(page, '[data-testid="policies"] .figure', (text) => Number(text) > 0))).toBeGreaterThan(0);
    await checkAndCapture(opened, 'home');
  });

  it('shows the meshes with their mTLS backends, and a mesh overview', async () => {
    const meshes = await open('/meshes');
    expect(await textOf(meshes.page, '[data-testid="mesh-row-payments"]', (text) => text.includes('ca-1'))).toContain('ca-1 (builtin)');
    expect(await textOf(meshes.page, '[data-testid="mesh-row-default"]', (text) => text.includes('2 of 5'))).toContain('2 of 5');
    await checkAndCapture(meshes, 'meshes');

    const mesh = await open('/meshes/default');
    expect(await textOf(mesh.page, '[data-testid="mesh-proxies"]', (text) => text === '5')).toBe('5');
    await mesh.page.getByRole('cell', { name: 'MeshTimeout' }).waitFor();
    await checkAndCapture(mesh, 'mesh');
  });

  it('lists the proxies of a mesh with their status, filtered by the server', async () => {
    const list = await open('/meshes/default/data-plane-proxies');
    const { page } = list;
    expect(await textOf(page, '[data-testid="proxy-row-web-1"]', (text) => text.includes('Online'))).toContain('web');
    expect(await textOf(page, '[data-testid="proxy-row-offline-1"]', (text) => text.includes('Offline'))).toContain('billing');
    expect(await textOf(page, '[data-testid="proxies-total"]', (text) => text.startsWith('5'))).toBe('5 proxies match.');
    await checkAndCapture(list, 'data-plane-proxies');

    const filtered = await open('/meshes/default/data-plane-proxies');
    await filtered.page.getByLabel('Name contains').fill('backend');
    await filtered.page.getByRole('button', { name: 'Filter' }).click();
    expect(await textOf(filtered.page, '[data-testid="proxies-total"]', (text) => text.startsWith('1 '))).toBe('1 proxy matches.');
    expect(filtered.page.url()).toContain('?name=backend');
    await filtered.page.getByLabel('Name contains').fill('');
    await filtered.page.getByLabel('Type').selectOption('builtin');
    await filtered.page.getByRole('button', { name: 'Filter' }).click();
    await textOf(filtered.page, '[data-testid="proxies-total"]', (text) => text === '1 proxy matches.');
    await filtered.page.locator('[data-testid="proxy-row-edge-gateway"]').waitFor();
    await filtered.page.getByLabel('Tags (key:value, comma separated)').fill('version:v1');
    await filtered.page.getByLabel('Type').selectOption('');
    await filtered.page.getByRole('button', { name: 'Filter' }).click();
    expect(await textOf(filtered.page, '[data-testid="proxies-total"]', (text) => text === '2 proxies match.')).toBe('2 proxies match.');
    await filtered.page.getByLabel('Tags (key:value, comma separated)').fill('');
    await filtered.page.getByLabel('Status').selectOption('offline');
    await filtered.page.getByRole('button', { name: 'Filter' }).click();
    expect(await textOf(filtered.page, '[data-testid="proxies-total"]', (text) => text === '3 proxies match.')).toBe('3 proxies match.');
    expect(filtered.page.url()).toContain('status=offline');
    for (const name of ['offline-1', 'edge-gateway', 'kong-1']) await filtered.page.locator(`[data-testid="proxy-row-${name}"]`).waitFor();
    expect(filtered.problems).toEqual([]);
    await filtered.page.close();
  });

  it("shows a proxy's status, subscriptions, inbounds, outbounds and certificate", async () => {
    const opened = await open('/meshes/default/data-plane-proxies/web-1');
    const { page } = opened;
    expect(await textOf(page, '[data-testid="subscriptions"] tbody', (text) => text.includes('Connected'))).toContain('Connected');
    expect(await textOf(page, '[data-testid="inbounds"] tbody', (text) => text.includes('mesh.io/service=web'))).toContain('mesh.io/protocol=http');
    expect(await textOf(page, '[data-testid="outbounds"] tbody', (text) => text.includes('mesh.io/service=backend'))).toContain('mesh.io/service=backend');
    expect(await textOf(page, '[data-testid="certificate"]', (text) => text.includes('builtin-ca'))).toMatch(/Expires.*Rotations\s*\d+\s*Issued by backend\s*builtin-ca/s);
    await checkAndCapture(opened, 'data-plane-proxy');
  });

  it("shows the policies a proxy matches and the rules of the targetRef policies", async () => {
    const opened = await open('/meshes/default/data-plane-proxies/web-1/policies');
    expect(await textOf(opened.page, '[data-testid="matched-policies"] tbody', (text) => text.includes('TrafficPermission'))).toContain('TrafficPermission');
    expect(await textOf(opened.page, '[data-testid="rules"] tbody', (text) => text.includes('MeshTimeout'))).toContain('web-to-backend');
    await checkAndCapture(opened, 'data-plane-proxy-policies');
  });

  it("shows a builtin gateway's listeners, hosts and routes with the policies of each destination", async () => {
    const opened = await open('/meshes/default/data-plane-proxies/edge-gateway/policies');
    expect(await textOf(opened.page, 'main p', (text) => text.startsWith('Gateway'))).toBe('Gateway edge');
    const row = await textOf(opened.page, '[data-testid="gateway-policies"] tbody', (text) => text.includes('edge-to-backend'));
    expect(row).toMatch(/^8080 HTTP\s*\*\s*edge-to-backend\s*mesh\.io\/service=backend/);
    expect(row).toContain('CircuitBreaker: circuit-breaker-all-defaultRetry: retry-all-defaultTimeout: timeout-all-default');
    await checkAndCapture(opened, 'gateway-policies');
  });

  it('shows the configuration pushed to a proxy, in sections, searchable', async () => {
    const opened = await open('/meshes/default/data-plane-proxies/web-1/config');
    const { page } = opened;
    await page.locator('[data-testid="config-section"]').first().waitFor();
    const sections = await page.locator('[data-testid="config-section"]').count();
    expect(sections).toBeGreaterThan(1);
    await page.getByLabel('Search the configuration').fill('outbound:');
    await page.locator('[data-testid="config-section"] mark').first().waitFor();
    expect(await page.locator('[data-testid="config-section"][open]').count()).toBeGreaterThan(0);
    await checkAndCapture(opened, 'data-plane-proxy-config');
  });

  it("shows Envoy's stats and clusters, fetched live through the control plane", async () => {
    const stats = await open('/meshes/default/data-plane-proxies/web-1/stats');
    expect(await textOf(stats.page, '[data-testid="envoy-stats"]', (text) => text.includes('server.live'))).toContain('server.live');
    await checkAndCapture(stats, 'data-plane-proxy-stats');
    const clusters = await open('/meshes/default/data-plane-proxies/web-1/clusters');
    expect(await textOf(clusters.page, '[data-testid="envoy-clusters"]', (text) => text.includes('backend'))).toContain('backend');
    await checkAndCapture(clusters, 'data-plane-proxy-clusters');
  });

  it('shows the effective configuration, the sign-in page and a not-found page', async () => {
    const diagnostics = await open('/diagnostics');
    expect(await textOf(diagnostics.page, '[data-testid="effective-config"]', (text) => text.includes('"apiServer"'))).toContain('"gui"');
    await checkAndCapture(diagnostics, 'diagnostics', 'idle');
    const signIn = await open('/sign-in');
    await signIn.page.getByLabel('User token').waitFor();
    await checkAndCapture(signIn, 'sign-in', 'idle');
    const missing = await open('/no-such-page/at/all');
    await missing.page.getByRole('heading', { name: 'Not found' }).waitFor();
    await checkAndCapture(missing, 'not-found', 'idle');
  });

  it('signs in with a user token where loopback is not admin, refuses one that does not verify, and signs out', async () => {
    // A control plane whose loopback callers are anonymous, as remote ones are: its admin token issues jane's first.
    const first = await startControlPlane();
    const adminToken = Buffer.from((await callApi(first.url, 'GET', '/global-secrets/admin-user-token')).json.data as string, 'base64').toString();
    const token = (await callApi(first.url, 'POST', '/tokens/user', { name: 'jane', groups: ['team-a'], validFor: '1h' })).text;
    await first.stop();
    const remote = await startControlPlane({ workDir: first.workDir, ports: first.ports, env: { MESH_API_SERVER_AUTHN_LOCALHOST_IS_ADMIN: 'false' } });
    try {
      const who = await fetch(`${remote.url}/who-am-i`, { headers: { authorization: `Bearer ${adminToken}` } });
      expect(((await who.json()) as { name: string }).name).toBe('mesh-system:admin');
      const { page, problems } = await open('/sign-in', remote.url);
      await textOf(page, '[data-testid="caller"]', (text) => text === 'Not signed in');
      await page.getByLabel('User token').fill('not-a-token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'does not accept this token' }).waitFor();
      // The refusal is the answer to the check of the token (which the browser logs too), nothing else.
      expect(problems.sort()).toEqual([expect.stringMatching(/^401: .*\/who-am-i$/), expect.stringMatching(/^console: Failed to load resource: .*401/)]);
      problems.length = 0;
      await page.getByLabel('User token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      expect(await textOf(page, '[data-testid="caller"]', (text) => text.includes('jane'))).toBe('Signed in as jane');
      expect(await page.evaluate<string | null>("sessionStorage.getItem('mesh.userToken')")).toBe(token);
      await page.locator('.live[data-state="live"]').waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await textOf(page, '[data-testid="caller"]', (text) => text === 'Not signed in');
      expect(await page.evaluate<string | null>("sessionStorage.getItem('mesh.userToken')")).toBeNull();
      expect(problems).toEqual([]);
    } finally {
      await remote.stop();
    }
  });

  it('shows, on a global, the zones with their status and control plane version, live', async () => {
    const global = await startControlPlane({ binary: 'mesh-global' });
    try {
      const zone = await startControlPlane({ env: zoneOf(global, 'zone-1') });
      try {
        const opened = await open('/', global.url);
        expect(await textOf(opened.page, '[data-testid="zone-row-zone-1"]', (text) => text.includes('Online'))).toBe('zone-1Online2.5.0');
        expect(await textOf(opened.page, '[data-testid="mesh-row-default"]', (text) => text.includes('default'))).toContain('0 of 0');
        // The zone leaving shows on the open page.
        await zone.stop();
        expect(await textOf(opened.page, '[data-testid="zone-row-zone-1"]', (text) => text.includes('Offline'))).toBe('zone-1Offline2.5.0');
        await checkAndCapture(opened, 'global-home');
      } finally {
        await zone.stop();
      }
    } finally {
      await global.stop();
    }
  });

  it('is reached by keyboard: a skip link first, then the navigation', async () => {
    const { page } = await open('/');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string | undefined>('document.activeElement?.textContent')).toBe('Skip to content');
    let reachedNavigation = false;
    for (let presses = 0; presses < 15 && !reachedNavigation; presses++) {
      await page.keyboard.press('Tab');
      reachedNavigation = await page.evaluate<boolean>(`document.activeElement?.closest('nav[aria-label="Main"]') != null`);
    }
    expect(reachedNavigation).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    await page.close();
  });

  it('shows a change made through the API on the open page, without a reload', async () => {
    const list = await open('/meshes/default/data-plane-proxies');
    const home = await open('/');
    await list.page.locator('.live[data-state="live"]').waitFor();
    await home.page.locator('.live[data-state="live"]').waitFor();
    await textOf(list.page, '[data-testid="proxies-total"]', (text) => text === '5 proxies match.');
    await textOf(home.page, '[data-testid="proxies-standard"] .figure', (text) => text === '3');
    await put('/meshes/default/dataplanes/late-1', sidecar('late-1', '10.0.0.30', 'late'));
    await list.page.locator('[data-testid="proxy-row-late-1"]').waitFor({ timeout: 30_000 });
    expect(await textOf(list.page, '[data-testid="proxies-total"]', (text) => text === '6 proxies match.')).toBe('6 proxies match.');
    expect(await textOf(home.page, '[data-testid="proxies-standard"] .figure', (text) => text === '4')).toBe('4');
    expect((await api('DELETE', '/meshes/default/dataplanes/late-1')).status).toBe(200);
    await list.page.locator('[data-testid="proxy-row-late-1"]').waitFor({ state: 'detached', timeout: 30_000 });
    expect([...list.problems, ...home.problems]).toEqual([]);
    await list.page.close();
    await home.page.close();
  });
});

describe.skipIf(!envoy)('serving the GUI', () => {
  it('is announced by GET / and answers its page at every path under /gui, never cached, under a strict policy', async () => {
    expect((await api('GET', '/')).json.gui).toBe('/gui');
    for (const path of ['/gui', '/gui/', '/gui/meshes/default/data-plane-proxies/web-1/config']) {
      const res = await fetch(`${cp.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const policy = res.headers.get('content-security-policy') ?? '';
      expect(policy).toContain("default-src 'self'");
      expect(policy).toContain("script-src 'self';");
      expect(policy).not.toContain('unsafe');
      expect(await res.text()).toContain('<base href="/gui/">');
    }
  });

  it('serves the hashed assets of the build for a year, and a missing one as a 404', async () => {
    const html = await (await fetch(`${cp.url}/gui/`)).text();
    const assets = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      expect(asset).toMatch(/-[\w-]{8}\.(js|css)$/);
      const res = await fetch(`${cp.url}/gui/${asset}`);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    }
    expect((await fetch(`${cp.url}/gui/assets/index-missing0.js`)).status).toBe(404);
  });

  it('answers 404 under /gui and announces none when the GUI is disabled', async () => {
    const disabled = await startControlPlane({ env: { MESH_API_SERVER_GUI_ENABLED: 'false' } });
    try {
      const index = (await callApi(disabled.url, 'GET', '/')).json;
      expect(index).not.toHaveProperty('gui');
      const page = await callApi(disabled.url, 'GET', '/gui/');
      expect(page.status).toBe(404);
      expect(page.json).toMatchObject({ status: 404, detail: 'The GUI is disabled (apiServer.gui.enabled is false)' });
    } finally {
      await disabled.stop();
    }
  });
});
