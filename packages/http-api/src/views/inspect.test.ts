import { afterEach, describe, expect, it } from 'vitest';
import { emptyMesh, expectJson, startApi, stdError, type TestApi, type TestApiOptions } from '../testing.js';

let api: TestApi | undefined;
const start = async (options: TestApiOptions = {}) => (api = await startApi(options));

afterEach(async () => {
  await api?.close();
  api = undefined;
});

const svc = (service: string, extra: Record<string, string> = {}) => ({ match: { 'mesh.io/service': service, ...extra } });
const ANY = svc('*');

/** Mesh `demo` without default policies: web-1 calls backend through a split route, edge-gw is a builtin gateway. */
async function smallTopology(api: TestApi): Promise<void> {
  const put = async (path: string, body: object) => expect((await api.put(path, body)).status).toBe(201);
  await put('/meshes/demo', emptyMesh('demo'));
  await put('/meshes/demo/dataplanes/web-1', {
    type: 'Dataplane',
    mesh: 'demo',
    name: 'web-1',
    networking: {
      address: '10.0.0.1',
      inbound: [{ port: 8080, servicePort: 8081, tags: { 'mesh.io/service': 'web', 'mesh.io/protocol': 'http' } }],
      outbound: [{ port: 10001, tags: { 'mesh.io/service': 'backend' } }],
    },
  });
  await put('/meshes/demo/dataplanes/backend-1', {
    type: 'Dataplane',
    mesh: 'demo',
    name: 'backend-1',
    networking: { address: '10.0.0.2', inbound: [{ port: 9090, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', version: 'v1' } }] },
  });
  await put('/meshes/demo/dataplanes/edge-gw', {
    type: 'Dataplane',
    mesh: 'demo',
    name: 'edge-gw',
    networking: { address: '10.0.0.3', gateway: { type: 'BUILTIN', tags: { 'mesh.io/service': 'edge' } } },
  });
  await put('/meshes/demo/traffic-routes/web-to-backend', {
    type: 'TrafficRoute',
    mesh: 'demo',
    name: 'web-to-backend',
    sources: [svc('web')],
    destinations: [svc('backend')],
    conf: {
      split: [
        { weight: 90, destination: { 'mesh.io/service': 'backend', version: 'v1' } },
        { weight: 10, destination: { 'mesh.io/service': 'backend', version: 'v2' } },
      ],
    },
  });
  await put('/meshes/demo/timeouts/backend-timeouts', {
    type: 'Timeout',
    mesh: 'demo',
    name: 'backend-timeouts',
    sources: [ANY],
    destinations: [svc('backend')],
    conf: { connectTimeout: '5s', http: { requestTimeout: '15s' } },
  });
  await put('/meshes/demo/traffic-permissions/allow-all', { type: 'TrafficPermission', mesh: 'demo', name: 'allow-all', sources: [ANY], destinations: [ANY] });
  await put('/meshes/demo/health-checks/backend-hc', {
    type: 'HealthCheck',
    mesh: 'demo',
    name: 'backend-hc',
    sources: [ANY],
    destinations: [svc('backend')],
    conf: { interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1 },
  });
  await put('/meshes/demo/meshgateways/edge', { type: 'MeshGateway', mesh: 'demo', name: 'edge', selectors: [svc('edge')], conf: { listeners: [{ port: 80, protocol: 'HTTP' }] } });
  await put('/meshes/demo/meshgatewayroutes/edge-route', {
    type: 'MeshGatewayRoute',
    mesh: 'demo',
    name: 'edge-route',
    selectors: [svc('edge')],
    conf: { http: { rules: [{ matches: [{ path: { match: 'PREFIX', value: '/' } }], backends: [{ destination: { 'mesh.io/service': 'backend' } }] }] } },
  });
}

/** A policy exactly as `GET` of it returns it. */
async function entity(api: TestApi, path: string): Promise<unknown> {
  const reply = await api.get(`/meshes/demo/${path}`);
  expect(reply.status).toBe(200);
  return reply.body;
}

describe('GET /meshes/{mesh}/dataplanes/{name}/policies', () => {
  it("lists a sidecar's attachments with the full policy entities, sorted by type and name", async () => {
    const api = await start();
    await smallTopology(api);
    expectJson(await api.get('/meshes/demo/dataplanes/web-1/policies'), 200, {
      kind: 'SidecarDataplane',
      total: 3,
      items: [
        { type: 'inbound', name: '10.0.0.1:8080:8081', service: 'web', matchedPolicies: { TrafficPermission: [await entity(api, 'traffic-permissions/allow-all')] } },
        {
          type: 'outbound',
          name: '127.0.0.1:10001',
          service: 'backend',
          matchedPolicies: { Timeout: [await entity(api, 'timeouts/backend-timeouts')], TrafficRoute: [await entity(api, 'traffic-routes/web-to-backend')] },
        },
        { type: 'service', name: 'backend', service: 'backend', matchedPolicies: { HealthCheck: [await entity(api, 'health-checks/backend-hc')] } },
      ],
    });
  });

  it("describes a builtin gateway's listeners, hosts, routes and the policies of each destination", async () => {
    const api = await start();
    await smallTopology(api);
    expectJson(await api.get('/meshes/demo/dataplanes/edge-gw/policies'), 200, {
      kind: 'MeshGatewayDataplane',
      gateway: { mesh: 'demo', name: 'edge' },
      listeners: [
        {
          port: 80,
          protocol: 'HTTP',
          hosts: [
            {
              hostName: '*',
              routes: [
                {
                  route: 'edge-route',
                  destinations: [
                    {
                      tags: { 'mesh.io/service': 'backend' },
                      policies: { HealthCheck: await entity(api, 'health-checks/backend-hc'), Timeout: await entity(api, 'timeouts/backend-timeouts') },
                    },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
  });

  it('shows writes made just before, and an empty list when nothing matches', async () => {
    const api = await start();
    await api.put('/meshes/demo', emptyMesh('demo'));
    await api.put('/meshes/demo/dataplanes/lone-1', { type: 'Dataplane', mesh: 'demo', name: 'lone-1', networking: { address: '10.0.0.9', inbound: [{ port: 80, tags: { 'mesh.io/service': 'lone' } }] } });
    expectJson(await api.get('/meshes/demo/dataplanes/lone-1/policies'), 200, { kind: 'SidecarDataplane', total: 0, items: [] });
    await api.put('/meshes/demo/traffic-traces/trace-all', { type: 'TrafficTrace', mesh: 'demo', name: 'trace-all', selectors: [ANY] });
    expectJson(await api.get('/meshes/demo/dataplanes/lone-1/policies'), 200, {
      kind: 'SidecarDataplane',
      total: 1,
      items: [{ type: 'dataplane', matchedPolicies: { TrafficTrace: [await entity(api, 'traffic-traces/trace-all')] } }],
    });
    // A matched policy written again (same selectors, new labels) shows as it is now.
    await api.put('/meshes/demo/traffic-traces/trace-all', { type: 'TrafficTrace', mesh: 'demo', name: 'trace-all', labels: { team: 'edge' }, selectors: [ANY] });
    const rewritten = await entity(api, 'traffic-traces/trace-all');
    expect(rewritten).toMatchObject({ labels: { team: 'edge' } });
    expectJson(await api.get('/meshes/demo/dataplanes/lone-1/policies'), 200, {
      kind: 'SidecarDataplane',
      total: 1,
      items: [{ type: 'dataplane', matchedPolicies: { TrafficTrace: [rewritten] } }],
    });
  });

  it('answers 404 for an unknown mesh or dataplane', async () => {
    const api = await start();
    expectJson(await api.get('/meshes/nope/dataplanes/web-1/policies'), 404, stdError(404, 'Could not build MeshContext', 'Not found'));
    expectJson(await api.get('/meshes/default/dataplanes/nope/policies'), 404, stdError(404, 'Could not get MatchedPolicies', 'Not found'));
  });
});

describe('GET /meshes/{mesh}/{policy-path}/{name}/dataplanes', () => {
  it('lists where a policy attaches on each dataplane, sidecars and gateways, by dataplane name', async () => {
    const api = await start();
    await smallTopology(api);
    expectJson(await api.get('/meshes/demo/health-checks/backend-hc/dataplanes'), 200, {
      total: 2,
      items: [
        {
          kind: 'MeshGatewayDataplane',
          dataplane: { mesh: 'demo', name: 'edge-gw' },
          gateway: { mesh: 'demo', name: 'edge' },
          listeners: [{ port: 80, protocol: 'HTTP', hosts: [{ hostName: '*', routes: [{ route: 'edge-route', destinations: [{ 'mesh.io/service': 'backend' }] }] }] }],
        },
        { kind: 'SidecarDataplane', dataplane: { mesh: 'demo', name: 'web-1' }, attachments: [{ type: 'service', name: 'backend', service: 'backend' }] },
      ],
    });
    expectJson(await api.get('/meshes/demo/traffic-permissions/allow-all/dataplanes'), 200, {
      total: 2,
      items: [
        { kind: 'SidecarDataplane', dataplane: { mesh: 'demo', name: 'backend-1' }, attachments: [{ type: 'inbound', name: '10.0.0.2:9090:9090', service: 'backend' }] },
        { kind: 'SidecarDataplane', dataplane: { mesh: 'demo', name: 'web-1' }, attachments: [{ type: 'inbound', name: '10.0.0.1:8080:8081', service: 'web' }] },
      ],
    });
  });

  it('gives no items for an unknown policy and 404 for an unknown mesh', async () => {
    const api = await start();
    expectJson(await api.get('/meshes/default/timeouts/nope/dataplanes'), 200, { total: 0, items: [] });
    expectJson(await api.get('/meshes/nope/timeouts/x/dataplanes'), 404, stdError(404, 'Could not list Dataplanes', 'Not found'));
  });

  it('leaves the neighbouring routes alone', async () => {
    const api = await start();
    await smallTopology(api);
    expect((await api.get('/meshes/demo/traffic-routes/web-to-backend/_resources/dataplanes')).body).toMatchObject({ total: 2, items: [{ name: 'backend-1' }, { name: 'web-1' }] });
    expect((await api.get('/meshes/demo/dataplanes/web-1/_overview')).body).toMatchObject({ type: 'DataplaneOverview', name: 'web-1' });
    expect((await api.get('/meshes/demo/dataplanes/web-1')).body).toMatchObject({ type: 'Dataplane', name: 'web-1' });
  });
});

describe('GET /meshes/{mesh}/meshgateways/{name}/dataplanes and meshgatewayroutes', () => {
  it('lists the builtin gateway dataplanes a gateway selects and a route serves', async () => {
    const api = await start();
    await smallTopology(api);
    const edge = { total: 1, items: [{ dataplane: { mesh: 'demo', name: 'edge-gw' } }] };
    expectJson(await api.get('/meshes/demo/meshgateways/edge/dataplanes'), 200, edge);
    expectJson(await api.get('/meshes/demo/meshgatewayroutes/edge-route/dataplanes'), 200, edge);
  });

  it('answers 404 for an unknown gateway, route or mesh', async () => {
    const api = await start();
    expectJson(await api.get('/meshes/default/meshgateways/nope/dataplanes'), 404, stdError(404, 'Could not find MeshGateway', 'Not found'));
    expectJson(await api.get('/meshes/default/meshgatewayroutes/nope/dataplanes'), 404, stdError(404, 'Could not find MeshGatewayRoute', 'Not found'));
    expectJson(await api.get('/meshes/nope/meshgateways/edge/dataplanes'), 404, stdError(404, 'Could not build mesh context', 'Not found'));
  });
});

describe('GET /meshes/{mesh}/dataplanes/{name}/rules', () => {
  it('has no rules without targetRef policies, and 404 for unknown meshes and dataplanes', async () => {
    const api = await start();
    await smallTopology(api);
    expectJson(await api.get('/meshes/demo/dataplanes/web-1/rules'), 200, { total: 0, items: [] });
    expectJson(await api.get('/meshes/nope/dataplanes/web-1/rules'), 404, stdError(404, 'Could not build MeshContext', 'Not found'));
    expectJson(await api.get('/meshes/demo/dataplanes/nope/rules'), 404, stdError(404, 'Could not get MatchedPolicies', 'Not found'));
  });
});

const DUMP_TYPES = [
  'type.googleapis.com/envoy.admin.v3.BootstrapConfigDump',
  'type.googleapis.com/envoy.admin.v3.ClustersConfigDump',
  'type.googleapis.com/envoy.admin.v3.EndpointsConfigDump',
  'type.googleapis.com/envoy.admin.v3.ListenersConfigDump',
  'type.googleapis.com/envoy.admin.v3.RoutesConfigDump',
  'type.googleapis.com/envoy.admin.v3.SecretsConfigDump',
];

describe('GET .../xds', () => {
  it("dumps a dataplane's configuration as rendered by the control plane", async () => {
    const api = await start();
    await smallTopology(api);
    const reply = await api.get('/meshes/demo/dataplanes/web-1/xds');
    expect(reply.status).toBe(200);
    const [bootstrap, clusters, endpoints, listeners] = reply.body.configs;
    expect(reply.body.configs.map((config: { '@type': string }) => config['@type'])).toEqual(DUMP_TYPES);
    const stored = (await api.get('/meshes/demo/dataplanes/web-1')).body;
    const { type, mesh, name, creationTime, modificationTime, ...spec } = stored;
    expect(bootstrap.bootstrap).toEqual({
      node: {
        id: 'demo.web-1',
        cluster: 'web',
        metadata: { 'dataplane.admin.port': '9901', 'dataplane.proxyType': 'dataplane', 'dataplane.resource': JSON.stringify({ type, mesh, name, ...spec }) },
      },
    });
    expect(clusters.dynamicActiveClusters.map((entry: { cluster: { name: string } }) => entry.cluster.name)).toEqual([
      'backend-682413cd9359626a',
      'backend-a10be8a87b9201bd',
      'localhost:8081',
      'mesh:envoy:admin',
    ]);
    expect(endpoints.dynamicEndpointConfigs[0].endpointConfig).toEqual({
      '@type': 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
      clusterName: 'backend-682413cd9359626a',
      endpoints: [
        {
          lbEndpoints: [
            {
              endpoint: { address: { socketAddress: { address: '10.0.0.2', portValue: 9090 } } },
              loadBalancingWeight: 1,
              metadata: { filterMetadata: { 'envoy.lb': { 'mesh.io/protocol': 'http', version: 'v1' }, 'envoy.transport_socket_match': { 'mesh.io/protocol': 'http', version: 'v1' } } },
            },
          ],
        },
      ],
    });
    expect(listeners.dynamicListeners.map((entry: { name: string }) => entry.name)).toEqual(['inbound:10.0.0.1:8080', 'mesh:envoy:admin', 'outbound:127.0.0.1:10001']);
  });

  it('dumps zone ingresses and egresses, and answers 404 for unknown proxies', async () => {
    const api = await start();
    expect((await api.put('/zone-ingresses/zi-1', { type: 'ZoneIngress', name: 'zi-1', networking: { address: '10.0.0.1', port: 10001 } })).status).toBe(201);
    expect((await api.put('/zoneegresses/ze-1', { type: 'ZoneEgress', name: 'ze-1', networking: { address: '10.0.0.2', port: 10002 } })).status).toBe(201);
    const ingress = await api.get('/zoneingresses/zi-1/xds');
    expect(ingress.status).toBe(200);
    expect(ingress.body.configs.map((config: { '@type': string }) => config['@type'])).toEqual(DUMP_TYPES);
    expect(ingress.body.configs[0].bootstrap).toEqual({ node: { id: '.zi-1', cluster: 'zi-1', metadata: { 'dataplane.admin.port': '9901', 'dataplane.proxyType': 'ingress' } } });
    const egress = await api.get('/zoneegresses/ze-1/xds');
    expect(egress.body.configs[0].bootstrap).toEqual({ node: { id: '.ze-1', cluster: 'ze-1', metadata: { 'dataplane.admin.port': '9901', 'dataplane.proxyType': 'egress' } } });
    expect(egress.body.configs[1].dynamicActiveClusters.map((entry: { cluster: { name: string } }) => entry.cluster.name)).toEqual(['mesh:envoy:admin']);

    expectJson(await api.get('/meshes/default/dataplanes/nope/xds'), 404, stdError(404, 'Could not get dataplane resource', 'Not found'));
    expectJson(await api.get('/meshes/nope/dataplanes/web-1/xds'), 404, stdError(404, 'Could not get dataplane resource', 'Not found'));
    expectJson(await api.get('/zoneingresses/nope/xds'), 404, stdError(404, 'Could not get zone ingress resource', 'Not found'));
    expectJson(await api.get('/zoneegresses/nope/xds'), 404, stdError(404, 'Could not get zone egress resource', 'Not found'));
  });

  it('refuses, on a zone control plane, a zone ingress of another zone', async () => {
    const api = await start({ mode: 'zone', zoneName: 'zone-1' });
    const ingress = (zone: string) => ({ type: 'ZoneIngress', name: `zi-${zone}`, zone, networking: { address: '10.0.0.1', port: 10001 } });
    await api.store.create({ type: 'ZoneIngress', mesh: '', name: 'zi-zone-2', spec: JSON.stringify(ingress('zone-2')) });
    await api.store.create({ type: 'ZoneIngress', mesh: '', name: 'zi-zone-1', spec: JSON.stringify(ingress('zone-1')) });
    expectJson(await api.get('/zoneingresses/zi-zone-2/xds'), 400, stdError(400, 'Could not connect to zone ingress that resides in another zone', 'Resource is not valid'));
    expect((await api.get('/zoneingresses/zi-zone-1/xds')).status).toBe(200);
  });
});
