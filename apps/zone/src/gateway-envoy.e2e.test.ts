// Builtin gateways through real proxies: the zone binary, `mesh-dp` and Envoy as a gateway in
// front of two backend versions. A MeshGateway's HTTP listener routes by path, header and host to
// the MeshGatewayRoutes' backends and redirects, a listener no route serves answers 404, and a
// TCP listener proxies to its TCP route's backend; the targetRef policies selecting the gateway
// configure its routes, clusters and listeners (docs/xds.md, Builtin gateways; docs/policies.md).
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_DATAPLANE, type DataplaneProcess, eventually, requireEnvoy, sentAndHeld, startApp, startMeshDataplane } from './testing/envoy.js';
import { freePort, startControlPlane } from './testing/process.js';

const envoy = requireEnvoy('gateway-envoy.e2e');

const GATEWAY_DATAPLANE = `type: Dataplane
mesh: default
name: {{ name }}
networking:
  address: 127.0.0.1
  gateway:
    type: BUILTIN
    tags:
      mesh.io/service: edge
`;

let cp: Awaited<ReturnType<typeof startControlPlane>>;
const apps: Server[] = [];
const proxies: DataplaneProcess[] = [];
let httpPort = 0;
let tcpPort = 0;
let emptyPort = 0;

const api = async (path: string, body?: unknown) => {
  const res = await fetch(`${cp.url}${path}`, { method: body === undefined ? 'DELETE' : 'PUT', headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  expect([200, 201], await res.text()).toContain(res.status);
};

/** A request through the gateway: the answering app's name, or the status and body. */
async function viaGateway(port: number, path: string, headers: Record<string, string> = {}): Promise<string> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers, signal: AbortSignal.timeout(5000) });
    const text = await res.text();
    return res.status === 200 ? text : `${res.status} ${text}`;
  } catch (error) {
    return `failed: ${(error as Error).message}`;
  }
}

const rejectedUpdates = async (proxy: DataplaneProcess): Promise<string[]> => {
  const stats = await (await fetch(`http://127.0.0.1:${proxy.adminPort}/stats?filter=update_rejected`)).text();
  return [...stats.matchAll(/^(\S+update_rejected): (\d+)$/gm)].filter((match) => match[2] !== '0').map((match) => `${match[1]}: ${match[2]}`);
};

const backend = (version: string) => ({ weight: 1, destination: { 'mesh.io/service': 'backend', version } });

beforeAll(async () => {
  if (!envoy) return;
  cp = await startControlPlane({ env: { MESH_DP_SERVER_PORT: String(await freePort()) } });
  for (const version of ['v1', 'v2']) {
    const app = await startApp(`backend ${version}`);
    apps.push(app.server);
    proxies.push(await startMeshDataplane(cp, envoy, BACKEND_DATAPLANE, { name: `backend-${version}`, port: String(await freePort()), appPort: String(app.port), version }));
  }
  [httpPort, tcpPort, emptyPort] = [await freePort(), await freePort(), await freePort()];
  const selectors = [{ match: { 'mesh.io/service': 'edge' } }];
  await api('/meshes/default/meshgateways/edge', {
    type: 'MeshGateway',
    mesh: 'default',
    name: 'edge',
    selectors,
    conf: {
      listeners: [
        { port: httpPort, protocol: 'HTTP', tags: { port: 'http' } },
        { port: tcpPort, protocol: 'TCP', tags: { port: 'tcp' } },
        { port: emptyPort, protocol: 'HTTP', tags: { port: 'empty' } },
      ],
    },
  });
  await api('/meshes/default/meshgatewayroutes/edge-http', {
    type: 'MeshGatewayRoute',
    mesh: 'default',
    name: 'edge-http',
    selectors: [{ match: { 'mesh.io/service': 'edge', port: 'http' } }],
    conf: {
      http: {
        rules: [
          { matches: [{ path: { match: 'PREFIX', value: '/v1' } }], backends: [backend('v1')] },
          { matches: [{ path: { match: 'PREFIX', value: '/' }, headers: [{ match: 'EXACT', name: 'x-version', value: 'v2' }] }], backends: [backend('v2')] },
          { matches: [{ path: { match: 'EXACT', value: '/moved' } }], filters: [{ redirect: { scheme: 'https', hostname: 'example.com', statusCode: 301 } }] },
        ],
      },
    },
  });
  await api('/meshes/default/meshgatewayroutes/edge-tcp', {
    type: 'MeshGatewayRoute',
    mesh: 'default',
    name: 'edge-tcp',
    selectors: [{ match: { 'mesh.io/service': 'edge', port: 'tcp' } }],
    conf: { tcp: { rules: [{ backends: [backend('v2')] }] } },
  });
  proxies.push(await startMeshDataplane(cp, envoy, GATEWAY_DATAPLANE, { name: 'edge-1' }));
}, 180_000);

afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.stop()));
  for (const app of apps) app.close();
  await cp?.stop();
});

describe.skipIf(!envoy)('builtin gateways on real Envoy proxies', () => {
  it('routes HTTP by path and header to the route backends', async () => {
    await eventually(() => viaGateway(httpPort, '/v1/items'), (answer) => answer === 'backend v1', 'the gateway to route /v1', 60_000);
    expect(await viaGateway(httpPort, '/v1')).toBe('backend v1');
    expect(await viaGateway(httpPort, '/', { 'x-version': 'v2' })).toBe('backend v2');
    expect(await viaGateway(httpPort, '/v1', { host: 'api.example.com' })).toBe('backend v1');
  }, 90_000);

  it('answers 404 where no route matches, and redirects as a route says', async () => {
    expect(await viaGateway(httpPort, '/other')).toBe('404 ');
    // A listener no route serves.
    expect(await viaGateway(emptyPort, '/v1')).toBe('404 This is a MeshGateway. No routes match this MeshGateway!\n');
    const moved = await fetch(`http://127.0.0.1:${httpPort}/moved`, { redirect: 'manual' });
    expect([moved.status, moved.headers.get('location')]).toEqual([301, `https://example.com:${httpPort}/moved`]);
  });

  it('proxies TCP to the TCP route backend', async () => {
    expect(await eventually(() => viaGateway(tcpPort, '/'), (answer) => answer === 'backend v2', 'the TCP listener')).toBe('backend v2');
    for (const proxy of proxies) expect(await rejectedUpdates(proxy), proxy.name).toEqual([]);
  });

  it("shows in the control plane's dump of the gateway the route configurations its Envoy received, and its live stats", async () => {
    const edgeProxy = proxies.at(-1) as DataplaneProcess;
    const { sent, held } = await eventually(
      () => sentAndHeld(cp, '/meshes/default/dataplanes/edge-1/xds', edgeProxy),
      (both) => JSON.stringify(both.sent) === JSON.stringify(both.held),
      "the control plane's dump to show what the gateway holds",
    );
    expect(sent).toEqual(held);
    // Envoy received the HTTP listeners' route configurations over RDS: they are in the dump, with their virtual hosts.
    expect(sent.routes.map((route) => route.name)).toEqual(expect.arrayContaining([`edge:HTTP:${httpPort}`, `edge:HTTP:${emptyPort}`]));
    expect(sent.routes.find((route) => route.name === `edge:HTTP:${httpPort}`)?.virtualHosts).toEqual([{ name: '*', domains: ['*'] }]);
    const stats = await fetch(`${cp.url}/meshes/default/dataplanes/edge-1/stats?filter=rds.edge`);
    expect(stats.status).toBe(200);
    expect(await stats.text()).toMatch(/update_success: [1-9]/);
  });

  it('applies the targetRef policies selecting the gateway, with no update rejected', async () => {
    const edge = { kind: 'MeshService', name: 'edge' };
    const mesh = { kind: 'Mesh' };
    const policies: Array<[string, string, string, object]> = [
      ['MeshTimeout', 'meshtimeouts', 'edge-timeouts', { targetRef: edge, to: [{ targetRef: mesh, default: { connectionTimeout: '2s', http: { requestTimeout: '7s' } } }] }],
      ['MeshRetry', 'meshretries', 'edge-retries', { targetRef: edge, to: [{ targetRef: mesh, default: { http: { numRetries: 3 } } }] }],
      ['MeshCircuitBreaker', 'meshcircuitbreakers', 'edge-breaker', { targetRef: edge, to: [{ targetRef: mesh, default: { connectionLimits: { maxConnections: 77 } } }] }],
      ['MeshHealthCheck', 'meshhealthchecks', 'edge-checks', { targetRef: edge, to: [{ targetRef: mesh, default: { interval: '10s', http: { path: '/' } } }] }],
      ['MeshLoadBalancingStrategy', 'meshloadbalancingstrategies', 'edge-balancing', { targetRef: edge, to: [{ targetRef: mesh, default: { loadBalancer: { type: 'RingHash', ringHash: { hashPolicies: [{ type: 'Header', header: { name: 'x-user' } }] } } } }] }],
      ['MeshRateLimit', 'meshratelimits', 'edge-limits', { targetRef: edge, from: [{ targetRef: mesh, default: { local: { http: { requestRate: { num: 1000, interval: '1s' } } } } }] }],
      ['MeshTrace', 'meshtraces', 'edge-trace', { targetRef: edge, default: { backends: [{ type: 'Zipkin', zipkin: { url: 'http://127.0.0.1:9411/api/v2/spans' } }] } }],
      ['MeshFaultInjection', 'meshfaultinjections', 'edge-faults', { targetRef: edge, from: [{ targetRef: mesh, default: { http: [{ abort: { httpStatus: 418, percentage: 100 } }] } }] }],
    ];
    for (const [type, path, name, spec] of policies) await api(`/meshes/default/${path}/${name}`, { type, mesh: 'default', name, spec });
    // The fault answers every request.
    await eventually(() => viaGateway(httpPort, '/v1'), (answer) => answer.startsWith('418'), 'the gateway to apply the fault');
    const edgeProxy = proxies.at(-1) as DataplaneProcess;
    const dump = await (await fetch(`http://127.0.0.1:${edgeProxy.adminPort}/config_dump`)).text();
    for (const mark of ['"timeout": "7s"', '"num_retries": 3', '"max_connections": 77', 'health_checks', 'x-user', 'meshtrace:zipkin', '"connect_timeout": "2s"']) expect(dump, mark).toContain(mark);
    await api('/meshes/default/meshfaultinjections/edge-faults');
    await eventually(() => viaGateway(httpPort, '/v1'), (answer) => answer === 'backend v1', 'the gateway to route again');
    for (const proxy of proxies) expect(await rejectedUpdates(proxy), proxy.name).toEqual([]);
  }, 90_000);
});
