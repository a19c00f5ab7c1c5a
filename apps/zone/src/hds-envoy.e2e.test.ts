// Health from the control plane as an operator meets it: the zone binary, `mesh-dp` and real
// Envoy. The backend proxy's Envoy checks the applications behind its inbounds and reports to the
// control plane (the health discovery service); when an application stops, its inbound turns
// unready, its endpoint leaves the callers' EDS, and the API shows the proxy partially degraded
// and the service offline; when it starts again, all comes back (docs/xds.md).
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callThrough, clientDataplane, type DataplaneProcess, eventually, requireEnvoy, startApp, startMeshDataplane } from './testing/envoy.js';
import { freePort, startControlPlane } from './testing/process.js';

const envoy = requireEnvoy('hds-envoy.e2e');

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

/** The backend's probe: one failed TCP connect within a second makes it unhealthy. */
const PROBE_INTERVAL_MS = 1000;

/**
 * `backend-1`: the `backend` service in front of an application checked by its `serviceProbe`, and
 * `backend-admin` in front of another, checked by the default TCP connect.
 */
const BACKEND_TEMPLATE = `type: Dataplane
mesh: default
name: {{ name }}
networking:
  address: 127.0.0.1
  inbound:
    - port: {{ port }}
      servicePort: {{ appPort }}
      serviceProbe:
        interval: ${PROBE_INTERVAL_MS / 1000}s
        timeout: 1s
        unhealthyThreshold: 1
        healthyThreshold: 1
        tcp: {}
      tags:
        mesh.io/service: backend
        mesh.io/protocol: http
    - port: {{ adminInboundPort }}
      servicePort: {{ adminAppPort }}
      tags:
        mesh.io/service: backend-admin
        mesh.io/protocol: http
`;

let cp: Instance;
let backendApp: { port: number; server: Server; sockets: Set<Socket> };
const servers: Server[] = [];
const proxies: DataplaneProcess[] = [];
let web: DataplaneProcess;
let webOutboundPort: number;

const get = async (path: string): Promise<any> => {
  const res = await fetch(`${cp.url}${path}`);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
};

/** An HTTP app answering `backend` on `port`, keeping its connections so that stopping it ends them. */
async function listenBackend(port: number): Promise<{ port: number; server: Server; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('backend');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, server, sockets };
}

async function stopBackend(): Promise<void> {
  const closed = new Promise<void>((resolve) => backendApp.server.close(() => resolve()));
  for (const socket of backendApp.sockets) socket.destroy();
  await closed;
}

/** The backend endpoints web's Envoy holds, from its admin `/clusters`. */
async function backendEndpointsOfWeb(): Promise<string[]> {
  const text = await (await fetch(`http://127.0.0.1:${web.adminPort}/clusters`)).text();
  const hosts = new Set<string>();
  for (const line of text.split('\n')) {
    const match = /^backend::([^:]+:\d+)::health_flags::/.exec(line);
    if (match) hosts.add(match[1]!);
  }
  return [...hosts].sort();
}

/** The readiness of each inbound of `backend-1` as the API shows it, by service; a health block without `ready` is unready. */
async function backendInbounds(): Promise<Record<string, boolean | undefined>> {
  const dataplane = await get('/meshes/default/dataplanes/backend-1');
  const inbounds = dataplane.networking.inbound as Array<{ tags: Record<string, string>; health?: { ready?: boolean } }>;
  return Object.fromEntries(inbounds.map((inbound) => [inbound.tags['mesh.io/service'], inbound.health === undefined ? undefined : inbound.health.ready === true]));
}

beforeAll(async () => {
  if (!envoy) return;
  cp = await startControlPlane({
    env: {
      MESH_DP_SERVER_PORT: String(await freePort()),
      // Envoy reports every second (the default is 5s).
      MESH_DP_SERVER_HDS_INTERVAL: '1s',
      MESH_XDS_SERVER_DATAPLANE_DEREGISTRATION_DELAY: '1s',
    },
  });
  backendApp = await listenBackend(await freePort());
  servers.push(backendApp.server);
  const adminApp = await startApp('backend-admin');
  servers.push(adminApp.server);
  const backendVars = {
    name: 'backend-1',
    port: String(await freePort()),
    appPort: String(backendApp.port),
    adminInboundPort: String(await freePort()),
    adminAppPort: String(adminApp.port),
  };
  proxies.push(await startMeshDataplane(cp, envoy, BACKEND_TEMPLATE, backendVars));
  const webApp = await startApp('web');
  servers.push(webApp.server);
  webOutboundPort = await freePort();
  web = await startMeshDataplane(cp, envoy, clientDataplane('web', { backend: 'outboundPort' }), {
    name: 'web-1',
    port: String(await freePort()),
    appPort: String(webApp.port),
    outboundPort: String(webOutboundPort),
  });
  proxies.push(web);
}, 180_000);

afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.stop()));
  for (const server of servers) server.close();
  await cp?.stop();
});

describe.skipIf(!envoy)('health from the control plane with real Envoy', () => {
  it("marks the inbounds ready once Envoy's checks pass, the probed one and the one checked by a TCP connect", { timeout: 120_000 }, async () => {
    // A probed inbound starts unready: only the checks make it ready, and only then do callers get it.
    await eventually(backendInbounds, (inbounds) => inbounds.backend === true && inbounds['backend-admin'] === true, "backend-1's inbounds ready", 60_000);
    const webInbound = await eventually(
      () => get('/meshes/default/dataplanes/web-1'),
      (dataplane) => dataplane.networking.inbound[0].health?.ready === true,
      "web-1's inbound ready",
      60_000,
    );
    expect(webInbound.networking.inbound[0].health).toEqual({ ready: true });
    await eventually(backendEndpointsOfWeb, (hosts) => hosts.length === 1, "backend in web's EDS", 60_000);
    await eventually(() => callThrough(webOutboundPort), (answer) => answer === 'backend', 'web to reach backend', 60_000);
    expect(await get('/meshes/default/service-insights/backend')).toMatchObject({ status: 'online' });
  });

  it("takes the endpoint out of the callers' EDS when its application stops, and shows the proxy degraded", { timeout: 120_000 }, async () => {
    const [endpoint] = await backendEndpointsOfWeb();
    const stoppedAt = performance.now();
    await stopBackend();
    await eventually(backendEndpointsOfWeb, (hosts) => hosts.length === 0, "backend to leave web's EDS", 60_000);
    const elapsedMs = Math.round(performance.now() - stoppedAt);
    console.log(`hds-envoy: ${endpoint} left web's EDS ${elapsedMs} ms after its application stopped (probe interval + 1 s: ${PROBE_INTERVAL_MS + 1000} ms)`);

    expect(await backendInbounds()).toEqual({ backend: false, 'backend-admin': true });
    const overview = await get('/meshes/default/dataplanes+insights/backend-1');
    expect(overview.dataplane.networking.inbound.map((inbound: { health?: unknown }) => inbound.health)).toEqual([{}, { ready: true }]);
    const meshInsight = await eventually(
      () => get('/mesh-insights/default'),
      (insight) => insight.dataplanesByType?.standard?.partiallyDegraded === 1,
      'the mesh insight to count backend-1 partially degraded',
      30_000,
    );
    expect(meshInsight.dataplanesByType.standard).toMatchObject({ total: 2, online: 1, partiallyDegraded: 1 });
    // Each inbound of a partially degraded proxy counts offline in its service.
    await eventually(
      () => get('/meshes/default/service-insights/backend'),
      (service) => service.status === 'offline',
      'the backend service offline',
      30_000,
    );
    expect(await callThrough(webOutboundPort)).not.toBe('backend');
  });

  it('brings the endpoint back when the application starts again', { timeout: 120_000 }, async () => {
    backendApp = await listenBackend(backendApp.port);
    servers.push(backendApp.server);
    const startedAt = performance.now();
    await eventually(backendEndpointsOfWeb, (hosts) => hosts.length === 1, "backend back in web's EDS", 60_000);
    console.log(`hds-envoy: backend came back in web's EDS ${Math.round(performance.now() - startedAt)} ms after its application started`);
    await eventually(() => callThrough(webOutboundPort), (answer) => answer === 'backend', 'web to reach backend again', 60_000);
    expect(await backendInbounds()).toEqual({ backend: true, 'backend-admin': true });
    await eventually(() => get('/meshes/default/service-insights/backend'), (service) => service.status === 'online', 'the backend service online', 30_000);
    expect((await get('/mesh-insights/default')).dataplanesByType.standard).toMatchObject({ total: 2, online: 2 });
  });
});
