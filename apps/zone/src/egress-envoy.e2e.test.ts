// A zone egress through real proxies: the zone binary, `mesh-dp` running a web sidecar and a zone
// egress, both Envoy. In a mesh with mTLS that routes through zone egresses, web reaches an
// external service through the egress, which terminates mesh mTLS and applies the
// MeshTrafficPermissions selecting the external service (docs/policies.md, Zone proxies).
import type { Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callThroughTimes, clientDataplane, type DataplaneProcess, eventually, requireEnvoy, sentAndHeld, startApp, startDataplane, startMeshDataplane } from './testing/envoy.js';
import { freePort, startControlPlane } from './testing/process.js';

const envoy = requireEnvoy('egress-envoy.e2e');

const EGRESS = `type: ZoneEgress
name: {{ name }}
networking:
  address: 127.0.0.1
  port: {{ port }}
`;

let cp: Awaited<ReturnType<typeof startControlPlane>>;
const apps: Server[] = [];
const proxies: DataplaneProcess[] = [];
let outboundPort = 0;

async function api(method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${cp.url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  expect([200, 201], await res.text()).toContain(res.status);
}

const permission = (action: string) => ({
  type: 'MeshTrafficPermission',
  mesh: 'default',
  name: 'ext-clients',
  spec: { targetRef: { kind: 'MeshService', name: 'ext' }, from: [{ targetRef: { kind: 'MeshService', name: 'web' }, default: { action } }] },
});

const adminGet = async (proxy: DataplaneProcess, path: string) => (await fetch(`http://127.0.0.1:${proxy.adminPort}${path}`)).text();

beforeAll(async () => {
  if (!envoy) return;
  cp = await startControlPlane({ env: { MESH_DP_SERVER_PORT: String(await freePort()) } });
  await api('PUT', '/meshes/default', { type: 'Mesh', name: 'default', mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] }, routing: { zoneEgress: true } });
  const external = await startApp('external');
  apps.push(external.server);
  await api('PUT', '/meshes/default/external-services/ext', {
    type: 'ExternalService',
    mesh: 'default',
    name: 'ext',
    networking: { address: `127.0.0.1:${external.port}` },
    tags: { 'mesh.io/service': 'ext', 'mesh.io/protocol': 'http' },
  });
  const tokenRes = await fetch(`${cp.url}/tokens/zone`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ zone: '', scope: ['egress'], validFor: '1h' }) });
  const token = await tokenRes.text();
  expect(tokenRes.status, token).toBe(200);
  proxies.push(
    await startDataplane({
      envoy,
      cpAddress: `https://127.0.0.1:${cp.env.MESH_DP_SERVER_PORT}`,
      caCertFile: join(cp.workDir, 'mesh-cp.crt'),
      token,
      template: EGRESS,
      vars: { name: 'egress-1', port: String(await freePort()) },
      extraArgs: ['--proxy-type', 'egress'],
    }),
  );
  const web = await startApp('web');
  apps.push(web.server);
  outboundPort = await freePort();
  proxies.push(await startMeshDataplane(cp, envoy, clientDataplane('web', { ext: 'outboundPort' }), { name: 'web-1', port: String(await freePort()), appPort: String(web.port), outboundPort: String(outboundPort) }));
}, 180_000);

afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.stop()));
  for (const app of apps) app.close();
  await cp?.stop();
});

describe.skipIf(!envoy)('zone egress on real Envoy proxies', () => {
  it('carries web to the external service under mesh mTLS', async () => {
    await eventually(() => callThroughTimes(outboundPort, 2), (answers) => answers.every((answer) => answer === 'external'), 'web to reach the external service through the egress', 90_000);
    // The egress terminated mesh mTLS: its HTTP connection manager for the external service counted the requests.
    expect(await adminGet(proxies[0]!, '/stats?filter=http.ext.downstream_rq_total')).toMatch(/http\.ext\.downstream_rq_total: [1-9]/);
  }, 120_000);

  it("shows in the control plane's dumps of the egress and the sidecar what their Envoys received, and the egress's live stats", async () => {
    for (const [proxy, path] of [
      [proxies[0]!, '/zoneegresses/egress-1/xds'],
      [proxies[1]!, '/meshes/default/dataplanes/web-1/xds'],
    ] as const) {
      const { sent, held } = await eventually(() => sentAndHeld(cp, path, proxy), (both) => JSON.stringify(both.sent) === JSON.stringify(both.held), `the dump of ${proxy.name} to show what it holds`);
      expect(sent).toEqual(held);
      // Under mesh mTLS both hold certificates sent over SDS.
      expect(sent.secrets.length, proxy.name).toBeGreaterThan(0);
    }
    const stats = await fetch(`${cp.url}/zoneegresses/egress-1/stats?filter=http.ext.downstream_rq_total`);
    expect(stats.status).toBe(200);
    expect(await stats.text()).toMatch(/http\.ext\.downstream_rq_total: [1-9]/);
  });

  it('denies and allows as the MeshTrafficPermission selecting the external service says', async () => {
    await api('PUT', '/meshes/default/meshtrafficpermissions/ext-clients', permission('Deny'));
    await eventually(() => callThroughTimes(outboundPort, 2), (answers) => answers.every((answer) => answer !== 'external'), 'the egress to deny web');
    await api('PUT', '/meshes/default/meshtrafficpermissions/ext-clients', permission('Allow'));
    await eventually(() => callThroughTimes(outboundPort, 2), (answers) => answers.every((answer) => answer === 'external'), 'the egress to let web in again');
    for (const proxy of proxies) expect(await adminGet(proxy, '/stats?filter=update_rejected'), proxy.name).not.toMatch(/update_rejected: [1-9]/);
  }, 90_000);
});
