// Real proxies: the zone binary, `mesh-dp` and Envoy. `web` (on incremental xDS) reaches
// `backend` (on state-of-the-world xDS) through both proxies; TrafficRoute splits move traffic
// between backend versions; mesh mTLS with a TrafficPermission removed denies it; a deleted
// backend leaves web's Envoy; insights follow.
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_DATAPLANE, callThroughTimes, clientDataplane, type DataplaneProcess, eventually, requireEnvoy, startApp, startMeshDataplane } from './testing/envoy.js';
import { freePort, startControlPlane } from './testing/process.js';

const envoy = requireEnvoy('envoy.e2e');

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

let cp: Instance;
let outboundPort: number;
const apps: Server[] = [];
const proxies = new Map<string, DataplaneProcess>();
const backendPorts = new Map<string, number>();

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${cp.url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
};

const callBackendTimes = (times: number) => callThroughTimes(outboundPort, times);

async function startProxy(template: string, vars: Record<string, string>, extraArgs: string[] = []): Promise<DataplaneProcess> {
  const proxy = await startMeshDataplane(cp, envoy!, template, vars, extraArgs);
  proxies.set(vars.name!, proxy);
  return proxy;
}

async function startBackend(version: string): Promise<void> {
  const app = await startApp(`backend ${version}`);
  apps.push(app.server);
  const port = await freePort();
  backendPorts.set(version, port);
  await startProxy(BACKEND_DATAPLANE, { name: `backend-${version}`, port: String(port), appPort: String(app.port), version });
}

const adminGet = async (proxy: DataplaneProcess, path: string) => (await fetch(`http://127.0.0.1:${proxy.adminPort}${path}`)).text();

const route = (split: Array<[string, number]>) => ({
  type: 'TrafficRoute',
  mesh: 'default',
  name: 'web-to-backend',
  sources: [{ match: { 'mesh.io/service': 'web' } }],
  destinations: [{ match: { 'mesh.io/service': 'backend' } }],
  conf: { split: split.map(([version, weight]) => ({ weight, destination: { 'mesh.io/service': 'backend', version } })) },
});

beforeAll(async () => {
  if (!envoy) return;
  cp = await startControlPlane({ env: { MESH_DP_SERVER_PORT: String(await freePort()), MESH_XDS_SERVER_DATAPLANE_STATUS_FLUSH_INTERVAL: '1s' } });
  await startBackend('v1');
  await startBackend('v2');
  const web = await startApp('web');
  apps.push(web.server);
  outboundPort = await freePort();
  await startProxy(
    clientDataplane('web', { backend: 'outboundPort' }),
    { name: 'web-1', port: String(await freePort()), appPort: String(web.port), outboundPort: String(outboundPort) },
    ['--xds-transport-protocol-variant', 'DELTA_GRPC'],
  );
}, 120_000);

afterAll(async () => {
  await Promise.all([...proxies.values()].map((proxy) => proxy.stop()));
  for (const app of apps) app.close();
  await cp?.stop();
});

describe.skipIf(!envoy)('real Envoy proxies configured by the control plane', () => {
  it('carries a request from web through both proxies to the backend app, with no update rejected', async () => {
    const answers = await eventually(() => callBackendTimes(4), (values) => values.every((value) => value.startsWith('backend ')), 'web to reach backend');
    expect(answers.every((answer) => answer === 'backend v1' || answer === 'backend v2')).toBe(true);
    for (const proxy of proxies.values()) {
      const stats = await eventually(
        () => adminGet(proxy, '/stats?filter=update_(rejected|success)'),
        (text) => /listener_manager\.lds\.update_success: [1-9]/.test(text),
        `${proxy.name} to apply its listeners`,
      );
      const rejected = [...stats.matchAll(/^(\S+update_rejected): (\d+)$/gm)].filter((match) => match[2] !== '0');
      expect(rejected, `${proxy.name}: ${stats}`).toEqual([]);
    }
    // web's Envoy took its configuration over incremental xDS, as its bootstrap asked.
    expect(await adminGet(proxies.get('web-1')!, '/config_dump')).toContain('"api_type": "DELTA_GRPC"');
    expect(await adminGet(proxies.get('backend-v1')!, '/config_dump')).not.toContain('DELTA_GRPC');
    // The control plane answers the same from the live proxy's admin API.
    const viaApi = await api('GET', '/meshes/default/dataplanes/web-1/stats?filter=update_rejected');
    expect(viaApi.status).toBe(200);
    expect(viaApi.text).toMatch(/cluster_manager\.cds\.update_rejected: 0/);
  });

  it('moves traffic between backend versions as a TrafficRoute split says', async () => {
    expect((await api('PUT', '/meshes/default/traffic-routes/web-to-backend', route([['v1', 0], ['v2', 100]]))).status).toBe(201);
    await eventually(() => callBackendTimes(6), (answers) => answers.every((answer) => answer === 'backend v2'), 'all traffic on v2');
    // The new clusters got their endpoints when they asked, not after Envoy gave up waiting for them.
    const fetchTimeouts = await adminGet(proxies.get('web-1')!, '/stats?filter=init_fetch_timeout');
    expect(fetchTimeouts).toMatch(/^cluster\.\S+\.init_fetch_timeout: 0$/m);
    expect([...fetchTimeouts.matchAll(/^(\S+): (\d+)$/gm)].filter((match) => match[2] !== '0')).toEqual([]);
    expect((await api('PUT', '/meshes/default/traffic-routes/web-to-backend', route([['v1', 100], ['v2', 0]]))).status).toBe(200);
    await eventually(() => callBackendTimes(6), (answers) => answers.every((answer) => answer === 'backend v1'), 'all traffic on v1');
    expect((await api('DELETE', '/meshes/default/traffic-routes/web-to-backend')).status).toBe(200);
  });

  it("removes a deleted backend's endpoint from web's Envoy", async () => {
    const web = proxies.get('web-1')!;
    const port = backendPorts.get('v2')!;
    await eventually(() => adminGet(web, '/clusters'), (text) => text.includes(`127.0.0.1:${port}::`), 'backend v2 among the endpoints of web');
    const deleted = Date.now();
    expect((await api('DELETE', '/meshes/default/dataplanes/backend-v2')).status).toBe(200);
    await eventually(() => adminGet(web, '/clusters'), (text) => !text.includes(`127.0.0.1:${port}::`), 'backend v2 to leave the endpoints of web', 10_000);
    console.info(`backend v2 left web's Envoy ${Date.now() - deleted} ms after its deletion`);
    await eventually(() => callBackendTimes(4), (answers) => answers.every((answer) => answer === 'backend v1'), 'all traffic on v1');
  });

  it('denies traffic under mesh mTLS once no TrafficPermission allows it', async () => {
    const mesh = (await api('GET', '/meshes/default')).json;
    const mtls = { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] };
    expect((await api('PUT', '/meshes/default', { ...mesh, mtls })).status).toBe(200);
    const web = proxies.get('web-1')!;
    await eventually(() => adminGet(web, '/config_dump?resource=dynamic_active_secrets'), (text) => text.includes('identity_cert:secret:default'), 'web to hold its mesh certificate');
    // Encrypted and allowed by the default permission.
    await eventually(() => callBackendTimes(3), (answers) => answers.every((answer) => answer === 'backend v1'), 'traffic over mTLS');
    const insight = await eventually(
      () => api('GET', '/meshes/default/dataplanes+insights/web-1'),
      (res) => res.json?.dataplaneInsight?.mTLS?.issuedBackend === 'ca-1',
      'the certificate in the insight',
    );
    expect(insight.json.dataplaneInsight.mTLS).toMatchObject({ issuedBackend: 'ca-1', supportedBackends: ['ca-1'], certificateExpirationTime: expect.any(String) });

    expect((await api('DELETE', '/meshes/default/traffic-permissions/allow-all-default')).status).toBe(200);
    const denied = await eventually(() => callBackendTimes(3), (answers) => answers.every((answer) => answer !== 'backend v1'), 'traffic to be denied');
    expect(denied.join()).not.toContain('backend');
    const stats = await adminGet(proxies.get('backend-v1')!, '/stats?filter=rbac');
    expect(stats).toMatch(/rbac\.denied: [1-9]/);
  });

  it('stops mesh-dp with the control plane refusal when the proxy cannot be registered before its retries are over', async () => {
    const proxy = await startProxy(BACKEND_DATAPLANE.replace('mesh: default', 'mesh: nowhere'), { name: 'lost-1', port: String(await freePort()), appPort: '1', version: 'v1' }, [
      '--cp-retry-backoff',
      '1s',
      '--cp-retry-max-duration',
      '2s',
    ]);
    expect(await proxy.exited).toBe(1);
    expect(proxy.output()).toContain('Error: Failed to generate Envoy bootstrap config. mesh: mesh "nowhere" does not exist');
  });

  it('shows the proxies online while they run and offline once they stop', async () => {
    const statusOf = async (name: string) => {
      const res = await api('GET', `/meshes/default/dataplanes+insights/${name}`);
      const subscriptions = (res.json?.dataplaneInsight?.subscriptions ?? []) as Array<{ connectTime?: string; disconnectTime?: string }>;
      return subscriptions.some((s) => s.connectTime && !s.disconnectTime) ? 'online' : 'offline';
    };
    for (const name of ['web-1', 'backend-v1']) await eventually(() => statusOf(name), (status) => status === 'online', `${name} online`);
    expect(await proxies.get('web-1')!.stop()).toBe(0);
    expect(await proxies.get('backend-v1')!.stop()).toBe(0);
    for (const name of ['web-1', 'backend-v1']) await eventually(() => statusOf(name), (status) => status === 'offline', `${name} offline`);
  });
});
