// End to end: the GUI's service map (docs/gui.md, Service map) in real Chromium against the built
// mesh-zone binary, on a mesh with mTLS (so that permissions are checked) and proxies held online
// by ADS test clients. The map shows the services with their proxies online and the calls the
// permissions let through, follows a MeshTrafficPermission without a reload, and its nodes and
// arrows lead to the service and the policies.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AdsClient } from './testing/ads-client.js';
import { eventually } from './testing/envoy.js';
import { checkAndCapture, GuiBrowser, textOf, type OpenPage } from './testing/gui.js';
import type { ControlPlaneProcess } from './testing/process.js';
import { callApi, connectProxies, putResource, sidecar, startWithPlaintextDpServer } from './testing/xds-fixtures.js';

let cp: ControlPlaneProcess;
let gui: GuiBrowser;
const clients: AdsClient[] = [];

const api = (method: string, path: string, body?: unknown) => callApi(cp.url, method, path, body);
const put = (path: string, body: Record<string, unknown>) => putResource(cp.url, path, body);

beforeAll(async () => {
  let dpAddress: string;
  ({ cp, dpAddress } = await startWithPlaintextDpServer({ MESH_DP_SERVER_AUTHN_DP_PROXY_TYPE: 'none', MESH_XDS_SERVER_DATAPLANE_STATUS_FLUSH_INTERVAL: '500ms' }));
  // The default mesh keeps its allow-all TrafficPermission; with mTLS on, permissions are checked.
  await put('/meshes/default', { type: 'Mesh', name: 'default', mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } });
  await put('/meshes/default/dataplanes/web-1', sidecar('web-1', '10.0.0.1', 'web', ['backend', 'billing']));
  await put('/meshes/default/dataplanes/backend-1', sidecar('backend-1', '10.0.0.2', 'backend'));
  await put('/meshes/default/dataplanes/backend-2', sidecar('backend-2', '10.0.0.3', 'backend'));
  await put('/meshes/default/dataplanes/billing-1', sidecar('billing-1', '10.0.0.4', 'billing'));
  // A builtin gateway routing to backend, and a delegated one calling it.
  await put('/meshes/default/meshgateways/edge', {
    type: 'MeshGateway',
    mesh: 'default',
    name: 'edge',
    selectors: [{ match: { 'mesh.io/service': 'edge' } }],
    conf: { listeners: [{ port: 8080, protocol: 'HTTP' }, { port: 9443, protocol: 'TLS', hostname: 'tls.example.com', tls: { mode: 'PASSTHROUGH' } }] },
  });
  await put('/meshes/default/dataplanes/edge-1', { type: 'Dataplane', mesh: 'default', name: 'edge-1', networking: { address: '10.0.0.10', gateway: { type: 'BUILTIN', tags: { 'mesh.io/service': 'edge' } } } });
  await put('/meshes/default/meshgatewayroutes/edge-to-backend', {
    type: 'MeshGatewayRoute',
    mesh: 'default',
    name: 'edge-to-backend',
    selectors: [{ match: { 'mesh.io/service': 'edge' } }],
    conf: { http: { rules: [{ matches: [{ path: { match: 'PREFIX', value: '/' } }], backends: [{ destination: { 'mesh.io/service': 'backend' } }] }] } },
  });
  await put('/meshes/default/meshhttproutes/edge-api', {
    type: 'MeshHTTPRoute',
    mesh: 'default',
    name: 'edge-api',
    spec: {
      targetRef: { kind: 'MeshService', name: 'edge' },
      to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/api' } }], default: { backendRefs: [{ kind: 'MeshService', name: 'backend' }] } }] }],
    },
  });
  await put('/meshes/default/dataplanes/kong-1', {
    type: 'Dataplane',
    mesh: 'default',
    name: 'kong-1',
    networking: { address: '10.0.0.11', gateway: { tags: { 'mesh.io/service': 'kong' } }, outbound: [{ port: 10001, tags: { 'mesh.io/service': 'backend' } }] },
  });
  clients.push(...(await connectProxies(dpAddress, 'default', ['web-1', 'backend-1', 'edge-1'])));
  await eventually(
    async () => (await api('GET', '/meshes/default/service-insights/backend')).json?.status,
    (status) => status === 'partially_degraded',
    'backend partially degraded',
    60_000,
  );
  gui = await GuiBrowser.launch();
}, 180_000);

afterEach(async () => {
  await gui?.closePages();
});

afterAll(async () => {
  await gui?.close();
  for (const client of clients) client.close();
  await cp?.stop();
}, 60_000);

const open = (path: string): Promise<OpenPage> => gui.open(`${cp.url}/gui${path}`);
const edgeNames = async (opened: OpenPage) => (await opened.page.locator('[data-testid^="map-edge-"]').evaluateAll((edges) => edges.map((edge) => edge.getAttribute('aria-label')))).sort();

describe('the service map of the GUI in Chromium', () => {
  it('shows the services with their proxies online and the calls the permissions let through, live', async () => {
    const opened = await open('/meshes/default/service-map');
    const { page } = opened;
    expect(await textOf(page, '[data-testid="map-node-backend"]', (text) => text.includes('1/2'))).toContain('backend');
    expect(await textOf(page, '[data-testid="map-node-web"]', (text) => text.includes('1/1'))).toContain('web');
    expect(await textOf(page, '[data-testid="map-node-billing"]', (text) => text.includes('0/1'))).toContain('billing');
    expect(await page.locator('[data-testid="map-node-web"] a').getAttribute('aria-label')).toBe('Service web: 1 of 1 proxies online');
    // The gateways call backend too: the builtin one by its route, the delegated one by its outbound.
    expect(await edgeNames(opened)).toEqual(['edge calls backend', 'kong calls backend', 'web calls backend', 'web calls billing']);
    expect(await textOf(page, '[data-testid="map-call-web-backend"]', (text) => text !== '')).toContain('TrafficPermission allow-all-default');
    expect(await textOf(page, '[data-testid="map-enforcement"]', (text) => text !== '')).toContain('traffic permission lets in');
    await checkAndCapture(opened, 'service-map');

    // A MeshTrafficPermission keeping web out of backend removes the arrow without a reload (and, replacing the
    // TrafficPermission at backend's inbounds, lets no one else in either).
    const live = await open('/meshes/default/service-map');
    await live.page.locator('[data-testid="map-edge-web-backend"]').waitFor();
    await put('/meshes/default/meshtrafficpermissions/backend-no-web', {
      type: 'MeshTrafficPermission',
      mesh: 'default',
      name: 'backend-no-web',
      spec: { targetRef: { kind: 'MeshService', name: 'backend' }, from: [{ targetRef: { kind: 'MeshService', name: 'web' }, default: { action: 'Deny' } }] },
    });
    await live.page.locator('[data-testid="map-edge-web-backend"]').waitFor({ state: 'detached', timeout: 30_000 });
    expect(await edgeNames(live)).toEqual(['web calls billing']);
    // A new proxy calling billing adds its service and arrow.
    await put('/meshes/default/dataplanes/orders-1', sidecar('orders-1', '10.0.0.5', 'orders', ['billing']));
    await live.page.locator('[data-testid="map-edge-orders-billing"]').waitFor({ timeout: 30_000 });
    expect(await textOf(live.page, '[data-testid="map-node-orders"]', (text) => text.includes('0/1'))).toContain('orders');
    expect(live.problems).toEqual([]);
    await api('DELETE', '/meshes/default/meshtrafficpermissions/backend-no-web');
    await api('DELETE', '/meshes/default/dataplanes/orders-1');
  });

  it('opens the permissions of an arrow and the page of a node, by mouse and by keyboard', async () => {
    const opened = await open('/meshes/default/service-map');
    const { page } = opened;
    await page.locator('[data-testid="map-edge-web-billing"]').click();
    expect(await textOf(page, '[data-testid="map-panel"]', (text) => text.includes('allow-all-default'))).toContain('web → billing');
    expect(new URL(page.url()).search).toBe('?from=web&to=billing');
    await page.getByRole('link', { name: 'allow-all-default' }).click();
    await page.waitForURL(/\/policies\/traffic-permissions\/allow-all-default$/);
    await page.getByRole('heading', { name: /allow-all-default/ }).waitFor();

    // The keyboard: Enter on an arrow, then on a node.
    const keyboard = await open('/meshes/default/service-map');
    const edge = keyboard.page.locator('[data-testid="map-edge-web-backend"]');
    await edge.focus();
    await keyboard.page.keyboard.press('Enter');
    expect(await textOf(keyboard.page, '[data-testid="map-panel"]', (text) => text.includes('→'))).toContain('web → backend');
    expect(await edge.getAttribute('aria-pressed')).toBe('true');
    await keyboard.page.locator('[data-testid="map-node-backend"] a').focus();
    await keyboard.page.keyboard.press('Enter');
    await keyboard.page.waitForURL(/\/meshes\/default\/services\/backend$/);
    expect(await textOf(keyboard.page, '[data-testid="service-online"]', (text) => text !== '')).toBe('1 of 2');
    expect([...opened.problems, ...keyboard.problems]).toEqual([]);
  });

  it('is reached from the mesh page and the navigation', async () => {
    const opened = await open('/meshes/default');
    await opened.page.getByRole('main').getByRole('link', { name: 'Service map' }).click();
    await opened.page.waitForURL(/\/meshes\/default\/service-map$/);
    await opened.page.locator('[data-testid="map-node-web"]').waitFor();
    await opened.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Service map' }).waitFor();
    expect(opened.problems).toEqual([]);
  });
});

describe('the gateway pages of the GUI in Chromium', () => {
  it("opens a builtin gateway's page from the list, with its listeners, routes and proxies", async () => {
    const opened = await open('/meshes/default/gateways');
    const { page } = opened;
    await page.getByRole('link', { name: 'edge', exact: true }).click();
    await page.waitForURL(/\/meshes\/default\/gateways\/builtin\/edge$/);
    expect(await textOf(page, '[data-testid="listener-8080"]', (text) => text.includes('edge-to-backend'))).toMatch(/^8080\s*HTTP\s*\*\s*none/);
    expect(await textOf(page, '[data-testid="listener-9443"]', (text) => text !== '')).toMatch(/^9443\s*TLS\s*tls\.example\.com\s*PASSTHROUGH, 0 certificates/);
    await page.locator('[data-testid="route-MeshGatewayRoute-edge-to-backend"]').waitFor();
    await page.locator('[data-testid="route-MeshHTTPRoute-edge-api"]').waitFor();
    expect(await textOf(page, '[data-testid="gateway-proxy-edge-1"]', (text) => text.includes('Online'))).toContain('10.0.0.10');

    // A listener added through the API shows without a reload; the route links to its policy page.
    await put('/meshes/default/meshgateways/edge', {
      type: 'MeshGateway',
      mesh: 'default',
      name: 'edge',
      selectors: [{ match: { 'mesh.io/service': 'edge' } }],
      conf: { listeners: [{ port: 8080, protocol: 'HTTP' }, { port: 9443, protocol: 'TLS', hostname: 'tls.example.com', tls: { mode: 'PASSTHROUGH' } }, { port: 9090, protocol: 'TCP' }] },
    });
    expect(await textOf(page, '[data-testid="listener-9090"]', (text) => text !== '')).toMatch(/^9090\s*TCP/);
    await checkAndCapture({ page, problems: opened.problems }, 'gateway');

    const again = await open('/meshes/default/gateways/builtin/edge');
    await again.page.getByRole('link', { name: 'edge-api' }).click();
    await again.page.waitForURL(/\/policies\/meshhttproutes\/edge-api$/);
    expect(again.problems).toEqual([]);
  });

  it("opens a delegated gateway's page from the list, with its status, outbounds and routes", async () => {
    const opened = await open('/meshes/default/gateways');
    const { page } = opened;
    await page.getByRole('link', { name: 'kong-1' }).click();
    await page.waitForURL(/\/meshes\/default\/gateways\/delegated\/kong-1$/);
    expect(await textOf(page, '[data-testid="gateway-status"]', (text) => text !== '')).toBe('Offline');
    expect(await textOf(page, '[data-testid="outbound-10001"]', (text) => text !== '')).toMatch(/^10001\s*backend/);
    await page.getByRole('heading', { name: 'Routes' }).waitFor();
    await checkAndCapture(opened, 'delegated-gateway');
  });

  it('shows a not-found page for a gateway that does not exist, and for a proxy that is no delegated gateway', async () => {
    for (const path of ['/meshes/default/gateways/builtin/nowhere', '/meshes/default/gateways/delegated/web-1']) {
      const opened = await open(path);
      await opened.page.getByRole('heading', { name: 'Not found' }).waitFor();
    }
  });
});

describe('the layout of the GUI with long names in a narrow window', () => {
  const LONG_PROXY = 'checkout-frontend-canary-replica-in-the-eu-west-availability-zone-number-one';
  const LONG_SERVICE = 'checkout-frontend-canary-service-of-the-european-storefront-team';

  it('keeps every page within a 700 px window, long names wrapped', async () => {
    expect(LONG_SERVICE.length).toBeGreaterThanOrEqual(60);
    await put(`/meshes/default/dataplanes/${LONG_PROXY}`, sidecar(LONG_PROXY, '10.0.0.20', LONG_SERVICE, ['backend']));
    const pages: Array<[string, string]> = [
      ['/', '[data-testid="proxies-standard"]'],
      ['/meshes/default/data-plane-proxies', `[data-testid="proxy-row-${LONG_PROXY}"]`],
      [`/meshes/default/data-plane-proxies/${LONG_PROXY}`, 'h1'],
      ['/meshes/default/services', `[data-testid="service-row-${LONG_SERVICE}"]`],
      [`/meshes/default/services/${LONG_SERVICE}`, `[data-testid="proxy-row-${LONG_PROXY}"]`],
      ['/meshes/default/service-map', `[data-testid="map-node-${LONG_SERVICE}"]`],
      ['/meshes/default/gateways/builtin/edge', '[data-testid="listener-8080"]'],
    ];
    for (const [path, selector] of pages) {
      const opened = await open(path);
      await opened.page.setViewportSize({ width: 700, height: 900 });
      await opened.page.locator(selector).first().waitFor();
      await opened.page.locator('.live[data-state="live"]').waitFor();
      const widths = await opened.page.evaluate<{ scroll: number; client: number }>('({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })');
      expect(widths.scroll, `${path} is ${widths.scroll} px wide in ${widths.client} px`).toBeLessThanOrEqual(widths.client);
      if (path === `/meshes/default/data-plane-proxies/${LONG_PROXY}`) {
        await checkAndCapture(opened, 'narrow-data-plane-proxy');
      } else {
        expect(opened.problems, path).toEqual([]);
        await opened.page.close();
      }
    }
    await api('DELETE', `/meshes/default/dataplanes/${LONG_PROXY}`);
  });

  it('shows the home page cards under headings that name them, and a Sign in link to the loopback admin', async () => {
    const opened = await open('/');
    const { page } = opened;
    await page.locator('[data-testid="proxies-standard"]').waitFor();
    const proxies = page.getByRole('region', { name: 'Data plane proxies' });
    expect(await proxies.locator('.card h3').allTextContents()).toEqual(['Standard proxies', 'Builtin gateways', 'Delegated gateways']);
    const servicesAndPolicies = page.getByRole('region', { name: 'Services and policies' });
    expect(await servicesAndPolicies.locator('.card h3').allTextContents()).toEqual(['Services', 'Policies']);
    // Admin from loopback, a user may still sign in with a token of their own.
    expect(await textOf(page, '[data-testid="caller"]', (text) => text.startsWith('Signed in'))).toBe('Signed in as mesh-system:admin');
    await page.getByRole('banner').getByRole('link', { name: 'Sign in' }).click();
    await page.waitForURL(/\/gui\/sign-in$/);
    expect(opened.problems).toEqual([]);
  });
});
