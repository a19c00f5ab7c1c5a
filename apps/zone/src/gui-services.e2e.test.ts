// End to end: the GUI's services and gateways pages (docs/gui.md, Services, Gateways) in real
// Chromium against the built mesh-zone binary, with proxies held online by ADS test clients. Each page opens with its data,
// passes `checkAndCapture`, and shows a change made through the API without a reload.
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

const externalService = (name: string, address: string, tags: Record<string, string>) => ({
  type: 'ExternalService',
  mesh: 'default',
  name,
  networking: { address },
  tags: { 'mesh.io/service': name, ...tags },
});

const delegatedGateway = (name: string, address: string) => ({ type: 'Dataplane', mesh: 'default', name, networking: { address, gateway: { tags: { 'mesh.io/service': 'kong' } } } });

beforeAll(async () => {
  let dpAddress: string;
  ({ cp, dpAddress } = await startWithPlaintextDpServer({ MESH_DP_SERVER_AUTHN_DP_PROXY_TYPE: 'none', MESH_XDS_SERVER_DATAPLANE_STATUS_FLUSH_INTERVAL: '500ms' }));
  await put('/meshes/default/dataplanes/web-1', sidecar('web-1', '10.0.0.1', 'web', ['backend']));
  await put('/meshes/default/dataplanes/backend-1', sidecar('backend-1', '10.0.0.2', 'backend'));
  await put('/meshes/default/dataplanes/backend-2', sidecar('backend-2', '10.0.0.3', 'backend'));
  await put('/meshes/default/dataplanes/billing-1', sidecar('billing-1', '10.0.0.4', 'billing'));
  await put('/meshes/default/external-services/httpbin', externalService('httpbin', 'httpbin.org:443', { 'mesh.io/protocol': 'http' }));
  await put('/meshes/default/meshgateways/edge', {
    type: 'MeshGateway',
    mesh: 'default',
    name: 'edge',
    selectors: [{ match: { 'mesh.io/service': 'edge' } }],
    conf: { listeners: [{ port: 8080, protocol: 'HTTP' }] },
  });
  await put('/meshes/default/dataplanes/edge-1', { type: 'Dataplane', mesh: 'default', name: 'edge-1', networking: { address: '10.0.0.10', gateway: { type: 'BUILTIN', tags: { 'mesh.io/service': 'edge' } } } });
  await put('/meshes/default/meshgatewayroutes/edge-to-backend', {
    type: 'MeshGatewayRoute',
    mesh: 'default',
    name: 'edge-to-backend',
    selectors: [{ match: { 'mesh.io/service': 'edge' } }],
    conf: { http: { rules: [{ matches: [{ path: { match: 'PREFIX', value: '/' } }], backends: [{ destination: { 'mesh.io/service': 'backend' } }] }] } },
  });
  await put('/meshes/default/dataplanes/kong-1', delegatedGateway('kong-1', '10.0.0.11'));
  // web-1 and backend-1 online: web is online, backend partially degraded, billing offline.
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

describe('the services and gateways pages of the GUI in Chromium', () => {
  it('lists the services of a mesh with their status and proxies online, and the external services apart', async () => {
    const opened = await open('/meshes/default/services');
    const { page } = opened;
    expect(await textOf(page, '[data-testid="service-row-web"]', (text) => text.includes('1 of 1'))).toContain('Online');
    const backend = await textOf(page, '[data-testid="service-row-backend"]', (text) => text.includes('1 of 2'));
    expect(backend).toContain('Partially degraded');
    expect(await textOf(page, '[data-testid="service-row-billing"]', (text) => text.includes('0 of 1'))).toContain('Offline');
    const external = await textOf(page, '[data-testid="external-row-httpbin"]', (text) => text.includes('httpbin.org:443'));
    expect(external).toContain('mesh.io/protocol=http');
    expect(await page.locator('[data-testid="service-row-httpbin"]').count()).toBe(0);

    // Changes through the API show without a reload.
    await put('/meshes/default/dataplanes/orders-1', sidecar('orders-1', '10.0.0.5', 'orders'));
    expect(await textOf(page, '[data-testid="service-row-orders"]', (text) => text.includes('0 of 1'))).toContain('Offline');
    await put('/meshes/default/external-services/stripe', externalService('stripe', 'api.stripe.com:443', { team: 'payments' }));
    expect(await textOf(page, '[data-testid="external-row-stripe"]', (text) => text.includes('api.stripe.com:443'))).toContain('team=payments');
    await checkAndCapture(opened, 'services');
  });

  it("shows a service's status and the proxies behind it, linked to their pages", async () => {
    const opened = await open('/meshes/default/services/backend');
    const { page } = opened;
    expect(await textOf(page, '[data-testid="service-status"]', (text) => text !== '')).toBe('Partially degraded');
    expect(await textOf(page, '[data-testid="proxy-row-backend-1"]', (text) => text.includes('Online'))).toContain('10.0.0.2');
    expect(await textOf(page, '[data-testid="proxy-row-backend-2"]', (text) => text.includes('Offline'))).toContain('10.0.0.3');
    expect(await page.locator('[data-testid^="proxy-row-"]').count()).toBe(2);

    // A new proxy of the service shows on the open page.
    await put('/meshes/default/dataplanes/backend-3', sidecar('backend-3', '10.0.0.6', 'backend'));
    expect(await textOf(page, '[data-testid="proxy-row-backend-3"]', (text) => text.includes('Offline'))).toContain('10.0.0.6');
    expect(await textOf(page, '[data-testid="service-online"]', (text) => text === '1 of 3')).toBe('1 of 3');

    await checkAndCapture(opened, 'service');
    const again = await open('/meshes/default/services/backend');
    await again.page.getByRole('link', { name: 'backend-1' }).click();
    await again.page.getByRole('heading', { name: /backend-1/ }).waitFor();
    expect(again.problems).toEqual([]);
  });

  it('shows the builtin gateways with their listeners, routes and proxies, and the delegated gateways', async () => {
    const opened = await open('/meshes/default/gateways');
    const { page } = opened;
    expect(await textOf(page, '[data-testid="listener-edge-8080"]', (text) => text.includes('edge-to-backend'))).toMatch(/^8080\s*HTTP\s*\*/);
    expect(await textOf(page, '[data-testid="gateway-edge"] [data-testid="gateway-proxies"]', (text) => text.includes('edge-1'))).toMatch(/edge-1\s*Online/);
    expect(await textOf(page, '[data-testid="delegated-kong-1"]', (text) => text.includes('Offline'))).toContain('10.0.0.11');
    expect(await page.locator('[data-testid^="delegated-"]').count()).toBe(1);

    // Changes through the API show without a reload: a listener added, a delegated gateway registered.
    await put('/meshes/default/meshgateways/edge', {
      type: 'MeshGateway',
      mesh: 'default',
      name: 'edge',
      selectors: [{ match: { 'mesh.io/service': 'edge' } }],
      conf: { listeners: [{ port: 8080, protocol: 'HTTP' }, { port: 9090, protocol: 'TCP', hostname: 'tcp.example.com' }] },
    });
    expect(await textOf(page, '[data-testid="listener-edge-9090"]', (text) => text.includes('tcp.example.com'))).toContain('TCP');
    await put('/meshes/default/dataplanes/kong-2', delegatedGateway('kong-2', '10.0.0.12'));
    expect(await textOf(page, '[data-testid="delegated-kong-2"]', (text) => text.includes('10.0.0.12'))).toContain('kong');
    await checkAndCapture(opened, 'gateways');
  });
});
