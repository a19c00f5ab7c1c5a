import { afterEach, describe, expect, it } from 'vitest';
import { emptyMesh, startApi, type TestApi } from '../testing.js';

let api: TestApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});

const MTLS = { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } };

const sidecar = (name: string, service: string, options: { outbound?: string[]; address?: string; transparent?: { reachableServices?: string[] }; tags?: Record<string, string> } = {}) => ({
  type: 'Dataplane',
  mesh: 'demo',
  name,
  networking: {
    address: options.address ?? '10.0.0.1',
    inbound: [{ port: 8080, tags: { 'mesh.io/service': service, 'mesh.io/protocol': 'http', ...options.tags } }],
    outbound: (options.outbound ?? []).map((to, at) => ({ port: 10001 + at, tags: { 'mesh.io/service': to } })),
    ...(options.transparent ? { transparentProxying: { redirectPortInbound: 15006, redirectPortOutbound: 15001, ...options.transparent } } : {}),
  },
});

const trafficPermission = (name: string, from: string, to: string) => ({
  type: 'TrafficPermission',
  mesh: 'demo',
  name,
  sources: [{ match: { 'mesh.io/service': from } }],
  destinations: [{ match: { 'mesh.io/service': to } }],
});

const meshTrafficPermission = (name: string, to: string, from: Array<{ targetRef: Record<string, unknown>; action: string }>) => ({
  type: 'MeshTrafficPermission',
  mesh: 'demo',
  name,
  spec: { targetRef: { kind: 'MeshService', name: to }, from: from.map((entry) => ({ targetRef: entry.targetRef, default: { action: entry.action } })) },
});

async function start(mesh: Record<string, unknown>, resources: Array<{ path: string; body: Record<string, unknown> }>): Promise<TestApi> {
  api = await startApi();
  expect((await api.put('/meshes/demo', emptyMesh('demo', mesh))).status).toBe(201);
  for (const { path, body } of resources) {
    const reply = await api.put(`/meshes/demo/${path}`, body);
    expect(reply.status, reply.text).toBe(201);
  }
  return api;
}

const dataplane = (name: string, body: Record<string, unknown>) => ({ path: `dataplanes/${name}`, body });
const edgesOf = async (test: TestApi) => {
  const reply = await test.get('/meshes/demo/service-map');
  expect(reply.status, reply.text).toBe(200);
  return (reply.body as { edges: unknown[] }).edges;
};

describe('GET /meshes/{mesh}/service-map', () => {
  it('draws declared outbounds between the services and counts their proxies; without mTLS no permission is checked', async () => {
    const test = await start({}, [
      dataplane('web-1', sidecar('web-1', 'web', { outbound: ['backend', 'httpbin'] })),
      dataplane('web-2', sidecar('web-2', 'web', { address: '10.0.0.2', outbound: ['backend'] })),
      dataplane('backend-1', sidecar('backend-1', 'backend', { address: '10.0.0.3' })),
      dataplane('edge-1', { type: 'Dataplane', mesh: 'demo', name: 'edge-1', networking: { address: '10.0.0.4', gateway: { tags: { 'mesh.io/service': 'kong' } }, outbound: [{ port: 10001, tags: { 'mesh.io/service': 'web' } }] } }),
    ]);
    const reply = await test.get('/meshes/demo/service-map');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      permissionsEnforced: false,
      services: [
        { name: 'backend', proxies: 1 },
        { name: 'kong', proxies: 1 },
        { name: 'web', proxies: 2 },
      ],
      // httpbin is served by no inbound: not on the map.
      edges: [
        { from: 'kong', to: 'web', policies: [] },
        { from: 'web', to: 'backend', policies: [] },
      ],
    });
  });

  it('lets transparent proxies call every service, or their reachable services', async () => {
    const test = await start({}, [
      dataplane('web-1', sidecar('web-1', 'web', { transparent: {} })),
      dataplane('api-1', sidecar('api-1', 'api', { address: '10.0.0.2', transparent: { reachableServices: ['db'] } })),
      dataplane('db-1', sidecar('db-1', 'db', { address: '10.0.0.3' })),
    ]);
    expect(await edgesOf(test)).toEqual([
      { from: 'api', to: 'db', policies: [] },
      { from: 'web', to: 'api', policies: [] },
      { from: 'web', to: 'db', policies: [] },
    ]);
  });

  it('keeps, with mTLS, the calls a TrafficPermission allows, naming it', async () => {
    const test = await start(MTLS, [
      dataplane('web-1', sidecar('web-1', 'web', { outbound: ['backend', 'db'] })),
      dataplane('backend-1', sidecar('backend-1', 'backend', { address: '10.0.0.2', outbound: ['db'] })),
      dataplane('db-1', sidecar('db-1', 'db', { address: '10.0.0.3' })),
      { path: 'traffic-permissions/web-to-backend', body: trafficPermission('web-to-backend', 'web', 'backend') },
      { path: 'traffic-permissions/backend-to-db', body: trafficPermission('backend-to-db', 'backend', 'db') },
    ]);
    // No permission lets web into db.
    expect(await edgesOf(test)).toEqual([
      { from: 'backend', to: 'db', policies: [{ kind: 'TrafficPermission', name: 'backend-to-db' }] },
      { from: 'web', to: 'backend', policies: [{ kind: 'TrafficPermission', name: 'web-to-backend' }] },
    ]);
  });

  it('lets the MeshTrafficPermission rules of an inbound replace its TrafficPermission, by the tags of the caller', async () => {
    const test = await start(MTLS, [
      dataplane('web-1', sidecar('web-1', 'web', { outbound: ['backend'], tags: { team: 'shop' } })),
      dataplane('admin-1', sidecar('admin-1', 'admin', { address: '10.0.0.2', outbound: ['backend'], tags: { team: 'ops' } })),
      dataplane('backend-1', sidecar('backend-1', 'backend', { address: '10.0.0.3' })),
      { path: 'traffic-permissions/anyone', body: trafficPermission('anyone', '*', '*') },
    ]);
    expect((await edgesOf(test)).map((edge) => (edge as { from: string }).from)).toEqual(['admin', 'web']);

    const policy = meshTrafficPermission('backend-from-mesh', 'backend', [
      { targetRef: { kind: 'Mesh' }, action: 'Allow' },
      { targetRef: { kind: 'MeshSubset', tags: { team: 'shop' } }, action: 'Deny' },
    ]);
    expect((await test.put('/meshes/demo/meshtrafficpermissions/backend-from-mesh', policy)).status).toBe(201);
    expect(await edgesOf(test)).toEqual([{ from: 'admin', to: 'backend', policies: [{ kind: 'MeshTrafficPermission', name: 'backend-from-mesh' }] }]);
  });

  it('answers 404 for a mesh that does not exist', async () => {
    const test = await start({}, []);
    const reply = await test.get('/meshes/nowhere/service-map');
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ title: 'Could not build the service map' });
  });
});
