// End to end: inspection of the built mesh-zone binary. A mesh, its proxies and policies are
// written over HTTP; the matched policies, the dataplanes of a policy, the rules and the `/xds`
// dumps are then read back, before and after a policy change; targetRef policies last.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane } from './testing/process.js';

type Started = Awaited<ReturnType<typeof startControlPlane>>;
let cp: Started;

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${cp.url}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type'), body: text ? JSON.parse(text) : undefined };
}

const get = (path: string) => call('GET', path);

async function put(path: string, body: Record<string, unknown>) {
  const reply = await call('PUT', path, body);
  expect([200, 201], `PUT ${path}: ${JSON.stringify(reply.body)}`).toContain(reply.status);
}

const svc = (service: string) => ({ match: { 'mesh.io/service': service } });

const notFound = (title: string) => ({ type: '/std-errors', status: 404, title, detail: 'Not found', details: 'Not found' });

/** A policy exactly as `GET` of it returns it. */
const entity = async (path: string) => (await get(`/meshes/shop/${path}`)).body;

const timeout = (connectTimeout: string) => ({
  type: 'Timeout',
  mesh: 'shop',
  name: 'backend-timeouts',
  sources: [svc('*')],
  destinations: [svc('backend')],
  conf: { connectTimeout, http: { requestTimeout: '15s' } },
});

beforeAll(async () => {
  cp = await startControlPlane();
  await put('/meshes/shop', { type: 'Mesh', name: 'shop', skipCreatingInitialPolicies: ['*'] });
  await put('/meshes/shop/dataplanes/web-1', {
    type: 'Dataplane',
    mesh: 'shop',
    name: 'web-1',
    networking: {
      address: '10.0.0.1',
      inbound: [{ port: 8080, servicePort: 8081, tags: { 'mesh.io/service': 'web', 'mesh.io/protocol': 'http' } }],
      outbound: [{ port: 10001, tags: { 'mesh.io/service': 'backend' } }],
    },
  });
  await put('/meshes/shop/dataplanes/backend-1', {
    type: 'Dataplane',
    mesh: 'shop',
    name: 'backend-1',
    networking: { address: '10.0.0.2', inbound: [{ port: 9090, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http' } }] },
  });
  await put('/meshes/shop/traffic-routes/route-all', { type: 'TrafficRoute', mesh: 'shop', name: 'route-all', sources: [svc('*')], destinations: [svc('*')], conf: { destination: { 'mesh.io/service': '*' } } });
  await put('/meshes/shop/traffic-permissions/allow-all', { type: 'TrafficPermission', mesh: 'shop', name: 'allow-all', sources: [svc('*')], destinations: [svc('*')] });
  await put('/meshes/shop/timeouts/backend-timeouts', timeout('5s'));
});

afterAll(async () => {
  await cp?.stop();
});

describe('mesh-zone inspection', () => {
  it('shows the policies matched for each attachment of a dataplane, as full entities', async () => {
    const reply = await get('/meshes/shop/dataplanes/web-1/policies');
    expect(reply.status).toBe(200);
    expect(reply.contentType).toMatch(/^application\/json/);
    expect(reply.body).toEqual({
      kind: 'SidecarDataplane',
      total: 2,
      items: [
        { type: 'inbound', name: '10.0.0.1:8080:8081', service: 'web', matchedPolicies: { TrafficPermission: [await entity('traffic-permissions/allow-all')] } },
        {
          type: 'outbound',
          name: '127.0.0.1:10001',
          service: 'backend',
          matchedPolicies: { Timeout: [await entity('timeouts/backend-timeouts')], TrafficRoute: [await entity('traffic-routes/route-all')] },
        },
      ],
    });
  });

  it('lists the dataplanes a policy applies to', async () => {
    expect((await get('/meshes/shop/traffic-permissions/allow-all/dataplanes')).body).toEqual({
      total: 2,
      items: [
        { kind: 'SidecarDataplane', dataplane: { mesh: 'shop', name: 'backend-1' }, attachments: [{ type: 'inbound', name: '10.0.0.2:9090:9090', service: 'backend' }] },
        { kind: 'SidecarDataplane', dataplane: { mesh: 'shop', name: 'web-1' }, attachments: [{ type: 'inbound', name: '10.0.0.1:8080:8081', service: 'web' }] },
      ],
    });
    expect((await get('/meshes/shop/timeouts/nope/dataplanes')).body).toEqual({ total: 0, items: [] });
  });

  it('has no rules without targetRef policies', async () => {
    expect(await get('/meshes/shop/dataplanes/web-1/rules')).toMatchObject({ status: 200, body: { total: 0, items: [] } });
  });

  it('dumps the configuration rendered for a dataplane, and follows a policy change', async () => {
    const connectTimeout = async () => {
      const reply = await get('/meshes/shop/dataplanes/web-1/xds');
      expect(reply.status).toBe(200);
      const [bootstrap, clusters, , listeners] = reply.body.configs;
      expect(bootstrap.bootstrap.node).toMatchObject({ id: 'shop.web-1', cluster: 'web', metadata: { 'dataplane.admin.port': '9901', 'dataplane.proxyType': 'dataplane' } });
      expect(Object.values(bootstrap.bootstrap.node.metadata).every((value) => typeof value === 'string')).toBe(true);
      expect(listeners.dynamicListeners.map((entry: { name: string }) => entry.name)).toEqual(['inbound:10.0.0.1:8080', 'mesh:envoy:admin', 'outbound:127.0.0.1:10001']);
      return clusters.dynamicActiveClusters.find((entry: { cluster: { name: string } }) => entry.cluster.name === 'backend')?.cluster.connectTimeout;
    };
    expect(await connectTimeout()).toBe('5s');
    await put('/meshes/shop/timeouts/backend-timeouts', timeout('2s'));
    expect(await connectTimeout()).toBe('2s');
    const policies = await get('/meshes/shop/dataplanes/web-1/policies');
    expect(policies.body.items[1].matchedPolicies.Timeout[0].conf.connectTimeout).toBe('2s');
  });

  it('answers 404 with the standard error body for unknown meshes, dataplanes and gateways', async () => {
    const cases: Array<[path: string, title: string]> = [
      ['/meshes/nope/dataplanes/web-1/policies', 'Could not build MeshContext'],
      ['/meshes/shop/dataplanes/nope/policies', 'Could not get MatchedPolicies'],
      ['/meshes/nope/dataplanes/web-1/rules', 'Could not build MeshContext'],
      ['/meshes/shop/dataplanes/nope/rules', 'Could not get MatchedPolicies'],
      ['/meshes/nope/timeouts/backend-timeouts/dataplanes', 'Could not list Dataplanes'],
      ['/meshes/shop/meshgateways/nope/dataplanes', 'Could not find MeshGateway'],
      ['/meshes/shop/dataplanes/nope/xds', 'Could not get dataplane resource'],
      ['/zoneingresses/nope/xds', 'Could not get zone ingress resource'],
      ['/zoneegresses/nope/xds', 'Could not get zone egress resource'],
    ];
    for (const [path, title] of cases) {
      const reply = await get(path);
      expect({ path, status: reply.status, body: reply.body }).toEqual({ path, status: 404, body: notFound(title) });
    }
  });

  it('gives the merged rules of the targetRef policies selecting a proxy, and follows their changes', async () => {
    const meshTimeout = (to: object[]) => ({ type: 'MeshTimeout', mesh: 'shop', name: 'timeouts', spec: { targetRef: { kind: 'Mesh' }, to } });
    const toMesh = { targetRef: { kind: 'Mesh' }, default: { connectionTimeout: '5s' } };
    await put('/meshes/shop/meshtimeouts/timeouts', meshTimeout([toMesh]));
    await put('/meshes/shop/meshtrafficpermissions/web-only', {
      type: 'MeshTrafficPermission',
      mesh: 'shop',
      name: 'web-only',
      spec: { targetRef: { kind: 'MeshService', name: 'backend' }, from: [{ targetRef: { kind: 'MeshService', name: 'web' }, default: { action: 'Allow' } }] },
    });
    const origins = (name: string) => [{ mesh: 'shop', name }];
    const backendRule = (conf: object) => ({
      type: 'destinationSubset',
      name: 'backend',
      addresses: ['127.0.0.1:10001'],
      service: 'backend',
      tags: { 'mesh.io/service': 'backend' },
      policyType: 'MeshTimeout',
      subset: {},
      conf,
      origins: origins('timeouts'),
    });
    expect(await get('/meshes/shop/dataplanes/web-1/rules')).toMatchObject({ status: 200, body: { total: 1, items: [backendRule({ connectionTimeout: '5s' })] } });
    const backend = await get('/meshes/shop/dataplanes/backend-1/rules');
    expect(backend.body.items).toEqual([
      expect.objectContaining({ type: 'clientSubset', addresses: ['10.0.0.2:9090'], policyType: 'MeshTrafficPermission', subset: { 'mesh.io/service': 'web' }, conf: { action: 'Allow' } }),
    ]);
    expect((await get('/meshes/shop/dataplanes/web-1/policies')).body.items[0]).toEqual({ type: 'dataplane', matchedPolicies: { MeshTimeout: [await entity('meshtimeouts/timeouts')] } });
    expect((await get('/meshes/shop/meshtrafficpermissions/web-only/dataplanes')).body).toEqual({
      total: 1,
      items: [{ kind: 'SidecarDataplane', dataplane: { mesh: 'shop', name: 'backend-1' }, attachments: [{ type: 'dataplane' }] }],
    });

    // A more specific entry for backend merges over the one for every destination.
    await put('/meshes/shop/meshtimeouts/timeouts', meshTimeout([toMesh, { targetRef: { kind: 'MeshService', name: 'backend' }, default: { idleTimeout: '1m' } }]));
    const [rule] = (await get('/meshes/shop/dataplanes/web-1/rules')).body.items;
    expect(rule).toEqual({ ...backendRule({ connectionTimeout: '5s', idleTimeout: '1m0s' }), subset: { 'mesh.io/service': 'backend' } });
  });
});
