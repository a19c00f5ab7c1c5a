// Cross-zone traffic through a zone ingress on real proxies: a global and two zones (the built
// binaries), `mesh-dp` running a backend sidecar and the zone ingress in zone 1 and a web sidecar
// in zone 2, all Envoy. Web reaches backend through the ingress under mesh mTLS, and keeps
// reaching it while the ingress's `mesh-dp` restarts: the ingress registering itself again keeps
// the services it advertises (docs/xds.md, Connecting), so zone 2 never loses backend's endpoints.
import type { Server } from 'node:http';
import { startTopology, type Topology, type TopologyControlPlane, type ZoneControlPlane } from '@mesh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_DATAPLANE, clientDataplane, type DataplaneProcess, eventually, requireEnvoy, startApp, startDataplane, startMeshDataplane } from './testing/envoy.js';
import { freePort } from './testing/process.js';

const envoy = requireEnvoy('multizone-ingress-envoy.e2e');

type Started = TopologyControlPlane;

const INGRESS = `type: ZoneIngress
name: {{ name }}
networking:
  address: 127.0.0.1
  port: {{ port }}
  advertisedAddress: 127.0.0.1
  advertisedPort: {{ port }}
`;

const ALL = [{ match: { 'mesh.io/service': '*' } }];

let topology: Topology;
let global: Started;
let zone1: ZoneControlPlane;
let zone2: ZoneControlPlane;
const apps: Server[] = [];
const proxies: DataplaneProcess[] = [];
let ingress: DataplaneProcess | undefined;
let ingressPort = 0;
let ingressToken = '';
let outboundPort = 0;

async function call(cp: Started, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${cp.api}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, text: await res.text() };
}

async function put(cp: Started, path: string, body: unknown): Promise<void> {
  const res = await call(cp, 'PUT', path, body);
  expect([200, 201], res.text).toContain(res.status);
}

const startIngress = () =>
  startDataplane({
    envoy: envoy!,
    cpAddress: zone1.dpServer,
    caCertFile: zone1.caCertFile,
    token: ingressToken,
    template: INGRESS,
    vars: { name: 'ingress-1', port: String(ingressPort) },
    extraArgs: ['--proxy-type', 'ingress'],
  });

/** Calls from web to backend in flight at once: their retries look at backend's endpoints every few milliseconds. */
const CALLERS = 4;

/**
 * One request from web to backend. Retries (connect failures and resets, every 0.1 s at most, for
 * over a minute) carry it over the moments the ingress's Envoy is down; a zone without backend's
 * endpoints answers `no healthy upstream` at once, which nothing retries.
 */
async function webToBackend(): Promise<string> {
  try {
    const res = await fetch(`http://127.0.0.1:${outboundPort}/`, { signal: AbortSignal.timeout(90_000) });
    const text = await res.text();
    return res.status === 200 ? text : `status ${res.status}: ${text}`;
  } catch (error) {
    const cause = (error as Error & { cause?: { code?: string } }).cause;
    return `failed: ${(error as Error).message}${cause?.code ? ` (${cause.code})` : ''}`;
  }
}

/** What startMeshDataplane reads of a control plane. */
const asProcess = (zone: ZoneControlPlane) => ({ url: zone.api, env: zone.env, workDir: zone.workDir });

const adminStats = async (proxy: DataplaneProcess, filter: string) => (await fetch(`http://127.0.0.1:${proxy.adminPort}/stats?filter=${encodeURIComponent(filter)}`)).text();

beforeAll(async () => {
  if (!envoy) return;
  // A slow restart on a busy machine must not end in the ingress being deregistered meanwhile.
  topology = await startTopology({ zones: 2, zoneEnv: (name): Record<string, string> => (name === 'zone-1' ? { MESH_XDS_SERVER_DATAPLANE_DEREGISTRATION_DELAY: '5m' } : {}) });
  ({ global } = topology);
  [zone1, zone2] = [topology.zones[0]!, topology.zones[1]!];
  await put(global, '/meshes/default', { type: 'Mesh', name: 'default', mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } });
  await put(global, '/meshes/default/retries/retry-all-default', {
    type: 'Retry',
    mesh: 'default',
    name: 'retry-all-default',
    sources: ALL,
    destinations: ALL,
    conf: { http: { numRetries: 2000, perTryTimeout: '16s', backOff: { baseInterval: '0.025s', maxInterval: '0.1s' }, retryOn: ['connect_failure', 'reset', 'gateway_error', 'refused_stream'] } },
  });
  await put(global, '/meshes/default/circuit-breakers/circuit-breaker-all-default', {
    type: 'CircuitBreaker',
    mesh: 'default',
    name: 'circuit-breaker-all-default',
    sources: ALL,
    destinations: ALL,
    conf: { thresholds: { maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 1024 } },
  });
  await put(global, '/meshes/default/timeouts/timeout-all-default', {
    type: 'Timeout',
    mesh: 'default',
    name: 'timeout-all-default',
    sources: ALL,
    destinations: ALL,
    conf: { connectTimeout: '5s', http: { requestTimeout: '80s' } },
  });
  const token = await call(global, 'POST', '/tokens/zone', { zone: 'zone-1', scope: ['ingress'], validFor: '1h' });
  expect(token.status, token.text).toBe(200);
  ingressToken = token.text;
  // Each zone has the mesh, its signing key and the policies before a proxy asks for a token.
  for (const cp of [zone1, zone2]) {
    await eventually(() => call(cp, 'GET', '/meshes/default/retries/retry-all-default'), (res) => res.status === 200, 'the mesh to reach the zone', 60_000);
    await eventually(() => call(cp, 'GET', '/meshes/default/timeouts/timeout-all-default'), (res) => res.status === 200 && res.text.includes('80s'), 'the timeout to reach the zone', 60_000);
  }

  const backend = await startApp('backend');
  apps.push(backend.server);
  proxies.push(await startMeshDataplane(asProcess(zone1), envoy, BACKEND_DATAPLANE, { name: 'backend-1', port: String(await freePort()), appPort: String(backend.port), version: 'v1' }));
  ingressPort = await freePort();
  ingress = await startIngress();
  const web = await startApp('web');
  apps.push(web.server);
  outboundPort = await freePort();
  proxies.push(await startMeshDataplane(asProcess(zone2), envoy, clientDataplane('web', { backend: 'outboundPort' }), { name: 'web-1', port: String(await freePort()), appPort: String(web.port), outboundPort: String(outboundPort) }));
}, 240_000);

afterAll(async () => {
  await Promise.all([...proxies, ...(ingress ? [ingress] : [])].map((proxy) => proxy.stop()));
  for (const app of apps) app.close();
  await topology?.stop();
});

describe.skipIf(!envoy)('a zone ingress on real proxies', () => {
  it('carries web in zone 2 to backend in zone 1', async () => {
    await eventually(webToBackend, (answer) => answer === 'backend', 'web to reach backend through the ingress', 120_000);
    expect(await adminStats(ingress!, `listener.127.0.0.1_${ingressPort}.downstream_cx_total`)).toMatch(/downstream_cx_total: [1-9]/);
  }, 150_000);

  it("loses no request while the ingress's mesh-dp restarts", async () => {
    const answers: string[] = [];
    let calling = true;
    const callers = Array.from({ length: CALLERS }, async () => {
      while (calling) answers.push(await webToBackend());
    });
    try {
      await eventually(() => answers.length, (count) => count >= 10, 'web to be calling backend');
      expect(await ingress!.stop()).toBe(0);
      ingress = await startIngress();
      // The new ingress carries the calls, and the zones have seen it register.
      await eventually(() => adminStats(ingress!, `listener.127.0.0.1_${ingressPort}.downstream_cx_total`), (text) => /downstream_cx_total: [1-9]/.test(text), 'the new ingress to carry calls', 120_000);
      const carried = answers.length;
      await eventually(() => answers.length, (count) => count >= carried + 50, 'more calls through the new ingress', 60_000);
    } finally {
      calling = false;
      await Promise.all(callers);
    }
    expect(answers.filter((answer) => answer !== 'backend')).toEqual([]);
  }, 300_000);
});
