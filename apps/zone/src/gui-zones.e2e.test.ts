// End to end: the GUI's zone pages (docs/gui.md, Zones) in real Chromium against a built
// mesh-global with a real zone control plane connected to it. The zone registers a zone ingress
// and a zone egress through its own API, which reach the global by zone sync; the pages show
// them, with the services the ingress advertises, and follow changes without a reload.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './testing/envoy.js';
import { checkAndCapture, GuiBrowser, textOf, type OpenPage } from './testing/gui.js';
import { startControlPlane, zoneOf } from './testing/process.js';
import { callApi } from './testing/xds-fixtures.js';

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

let global: Instance;
let zone: Instance;
let gui: GuiBrowser;

async function putOnZone(path: string, body: Record<string, unknown>): Promise<void> {
  // The zone accepts a proxy of a mesh once the global has synced the mesh to it.
  await eventually(
    async () => (await callApi(zone.url, 'PUT', path, body)).status,
    (status) => status === 200 || status === 201,
    `PUT ${path} on the zone`,
    60_000,
  );
}

const sidecar = (name: string, address: string, service: string) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: { address, inbound: [{ port: 8080, tags: { 'mesh.io/service': service, 'mesh.io/protocol': 'http' } }] },
});

beforeAll(async () => {
  global = await startControlPlane({ binary: 'mesh-global' });
  zone = await startControlPlane({ env: zoneOf(global, 'zone-1') });
  await putOnZone('/meshes/default/dataplanes/backend-1', sidecar('backend-1', '10.1.0.1', 'backend'));
  gui = await GuiBrowser.launch();
}, 120_000);

afterEach(async () => {
  await gui?.closePages();
});

afterAll(async () => {
  await gui?.close();
  await zone?.stop();
  await global?.stop();
}, 60_000);

const open = (path: string): Promise<OpenPage> => gui.open(`${global.url}/gui${path}`);

describe('the zone pages of a global, in Chromium', () => {
  it('lists the zones with their status, version, type, ingresses and egresses, and follows a new ingress and egress', async () => {
    const opened = await open('/zones');
    const row = '[data-testid="zone-row-zone-1"]';
    expect(await textOf(opened.page, row, (text) => text.includes('Online'))).toBe('zone-1Online2.5.0universal00');
    expect(await opened.page.locator('nav[aria-label="Main"]').getByRole('link', { name: 'Zones' }).count()).toBe(1);
    await opened.page.locator('.live[data-state="live"]').waitFor({ timeout: 30_000 });

    await putOnZone('/zone-ingresses/ingress', { type: 'ZoneIngress', name: 'ingress', networking: { address: '10.1.0.100', port: 10001, advertisedAddress: '192.0.2.1', advertisedPort: 10001 } });
    await putOnZone('/zoneegresses/egress', { type: 'ZoneEgress', name: 'egress', networking: { address: '10.1.0.101', port: 10002 } });
    expect(await textOf(opened.page, `${row} [data-testid="ingresses"]`, (text) => text === '1')).toBe('1');
    expect(await textOf(opened.page, `${row} [data-testid="egresses"]`, (text) => text === '1')).toBe('1');
    await checkAndCapture(opened, 'zones');
  });

  it("shows a zone's sync sessions and its ingresses and egresses with the services advertised, live", async () => {
    await eventually(
      async () => (await callApi(global.url, 'GET', '/zone-ingresses/zone-1.ingress')).json?.availableServices?.length,
      (services) => services === 1,
      'the ingress synced to the global with the service it advertises',
      60_000,
    );
    const opened = await open('/zones/zone-1');
    await textOf(opened.page, '[data-testid="zone-facts"]', (text) => text.includes('Online'));
    expect(await textOf(opened.page, '[data-testid="session-row"]', (text) => text.includes('Connected'))).toContain('2.5.0');
    // The responses of the open session, per kind the global sent the zone.
    await textOf(opened.page, '[data-testid^="session-kinds-"] [data-testid="kind-row-Mesh"]', (text) => text.startsWith('Mesh'));
    const ingress = '[data-testid="ingress-row-zone-1.ingress"]';
    expect(await textOf(opened.page, ingress, (text) => text.includes('mesh.io/service=backend'))).toContain('192.0.2.1:10001');
    expect(await textOf(opened.page, ingress, (text) => text.includes('Offline'))).toContain('in mesh default, 1 instance(s)');
    expect(await textOf(opened.page, '[data-testid="egress-row-zone-1.egress"]', (text) => text.includes('Offline'))).toContain('10.1.0.101:10002');
    await opened.page.locator('.live[data-state="live"]').waitFor({ timeout: 30_000 });

    // A second service in the zone: its ingress advertises it, and the open page shows it.
    await putOnZone('/meshes/default/dataplanes/web-1', sidecar('web-1', '10.1.0.2', 'web'));
    expect(await textOf(opened.page, ingress, (text) => text.includes('mesh.io/service=web'))).toContain('mesh.io/service=backend');
    await checkAndCapture(opened, 'zone');
  });

  it('answers a zone that does not exist with a not-found page', async () => {
    const opened = await open('/zones/nowhere');
    expect(await textOf(opened.page, 'main', (text) => text.includes('does not exist'))).toContain('Zone nowhere does not exist.');
    await opened.page.close();
  });
});
