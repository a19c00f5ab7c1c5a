// End to end: insights and overviews of the built binaries. Proxies are registered over HTTP;
// their insights (which the xDS server will write) are seeded into the stopped zone's database,
// and the restarted process computes its figures from what it finds there.
import { join } from 'node:path';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane } from './testing/process.js';

type Started = Awaited<ReturnType<typeof startControlPlane>>;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function call(cp: Started, method: string, path: string, body?: unknown) {
  const res = await fetch(`${cp.url}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const get = (cp: Started, path: string) => call(cp, 'GET', path);

const sidecar = (name: string, service: string, version: string) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': service, version } }] },
});

const notFound = { type: '/std-errors', status: 404, title: 'Could not retrieve a resource', detail: 'Not found', details: 'Not found' };

describe('mesh-zone, standalone', () => {
  let cp: Started;

  beforeAll(async () => {
    cp = await startControlPlane();
    for (const dataplane of [sidecar('web-1', 'web', 'v1'), sidecar('web-2', 'web', 'v2'), sidecar('backend-1', 'backend', 'v1')]) {
      expect((await call(cp, 'PUT', `/meshes/default/dataplanes/${dataplane.name}`, dataplane)).status).toBe(201);
    }
    const gateway = { type: 'Dataplane', mesh: 'default', name: 'edge', networking: { address: '10.0.0.2', gateway: { type: 'BUILTIN', tags: { 'mesh.io/service': 'edge' } } } };
    expect((await call(cp, 'PUT', '/meshes/default/dataplanes/edge', gateway)).status).toBe(201);
  });

  afterAll(async () => {
    await cp?.stop();
  });

  it('counts registered proxies as offline until they connect', async () => {
    const { status, body } = await get(cp, '/mesh-insights/default');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      type: 'MeshInsight',
      name: 'default',
      dataplanes: { total: 4, offline: 4 },
      policies: { CircuitBreaker: { total: 1 }, Retry: { total: 1 }, Timeout: { total: 1 }, TrafficPermission: { total: 1 }, TrafficRoute: { total: 1 } },
      dpVersions: { meshDp: { unknown: { total: 4, offline: 4 } }, envoy: { unknown: { total: 4, offline: 4 } } },
      mTLS: {},
      services: { total: 3, internal: 3 },
      dataplanesByType: { standard: { total: 3, offline: 3 }, gateway: { total: 1, offline: 1 }, gatewayBuiltin: { total: 1, offline: 1 }, gatewayDelegated: {} },
    });
    expect(body.lastSync).toMatch(TIMESTAMP);
    expect(body.modificationTime).toBe(body.lastSync);
    expect((await get(cp, '/mesh-insights')).body).toMatchObject({ total: 1, items: [{ name: 'default' }], next: null });
    expect((await get(cp, '/meshes/default/service-insights/web')).body).toMatchObject({
      type: 'ServiceInsight',
      mesh: 'default',
      name: 'web',
      status: 'offline',
      dataplanes: { total: 2, offline: 2 },
      addressPort: 'web.mesh:80',
    });
  });

  it('lists overviews with filters and pages; items without an insight have no insight key', async () => {
    const page = await get(cp, '/meshes/default/dataplanes+insights?tag=mesh.io/service:web&size=1');
    expect(page.body).toEqual({
      total: 2,
      items: [
        {
          type: 'DataplaneOverview',
          mesh: 'default',
          name: 'web-1',
          creationTime: expect.stringMatching(TIMESTAMP),
          modificationTime: expect.stringMatching(TIMESTAMP),
          dataplane: { networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web', version: 'v1' } }] } },
        },
      ],
      // A cursor after the page's last item (docs/api.md, Lists).
      next: `${cp.url}/meshes/default/dataplanes+insights?offset=~${Buffer.from('default\u0000web-1').toString('base64url')}&size=1&tag=mesh.io%2Fservice%3Aweb`,
    });
    expect((await get(cp, page.body.next.slice(cp.url.length))).body).toMatchObject({ total: 2, items: [{ name: 'web-2' }], next: null });
    expect((await get(cp, '/meshes/default/dataplanes/_overview?gateway=builtin')).body).toMatchObject({ total: 1, items: [{ name: 'edge' }] });
    expect((await get(cp, '/meshes/default/dataplanes/web-1/_overview')).body).toMatchObject({ name: 'web-1', dataplaneInsight: {} });
  });

  it('answers 404 with the standard error body for unknown names', async () => {
    for (const path of ['/mesh-insights/nowhere', '/meshes/nowhere/service-insights/web', '/meshes/default/dataplanes+insights/nowhere', '/zones+insights/nowhere', '/zoneegressoverviews/nowhere']) {
      expect(await get(cp, path)).toEqual({ status: 404, body: notFound });
    }
  });

  it('leaves /status/zones to a global control plane', async () => {
    const { status, body } = await get(cp, '/status/zones');
    expect(status).toBe(404);
    expect(body).toMatchObject({ type: '/std-errors', status: 404 });
    expect(body.detail).toContain('served by a global control plane');
  });

  it('shows what connected proxies reported, after a restart reads the insights', async () => {
    await cp.stop();
    const store = new SqliteResourceStore({ path: join(cp.workDir, 'mesh.db') });
    const subscription = (online: boolean) => ({
      id: '7b0c9a3e-1d2f-4e5a-9b8c-7d6e5f4a3b2c',
      controlPlaneInstanceId: '0f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f',
      connectTime: '2024-05-06T07:00:00.000Z',
      ...(online ? {} : { disconnectTime: '2024-05-06T07:05:00.000Z' }),
      status: { lastUpdateTime: '2024-05-06T07:00:00.000Z', total: { responsesSent: '4', responsesAcknowledged: '4' }, cds: {}, eds: {}, lds: {}, rds: {} },
      version: { meshDp: { version: '2.5.0' }, envoy: { version: '1.28.0', meshDpCompatible: true } },
    });
    await store.create({ type: 'DataplaneInsight', mesh: 'default', name: 'web-1', spec: JSON.stringify({ subscriptions: [subscription(true)] }) });
    await store.create({ type: 'DataplaneInsight', mesh: 'default', name: 'web-2', spec: JSON.stringify({ subscriptions: [subscription(false)] }) });
    await store.create({ type: 'DataplaneInsight', mesh: 'default', name: 'edge', spec: JSON.stringify({ subscriptions: [subscription(true)] }) });
    await store.close();
    cp = await startControlPlane({ workDir: cp.workDir, ports: cp.ports });

    expect((await get(cp, '/mesh-insights/default')).body).toMatchObject({
      dataplanes: { total: 4, online: 2, offline: 2 },
      dpVersions: { meshDp: { '2.5.0': { total: 3, online: 2, offline: 1 }, unknown: { total: 1, offline: 1 } } },
      dataplanesByType: { standard: { total: 3, online: 1, offline: 2 }, gateway: { total: 1, online: 1 } },
    });
    expect((await get(cp, '/meshes/default/service-insights')).body).toMatchObject({
      total: 3,
      items: [
        { name: 'backend', status: 'offline' },
        { name: 'edge', status: 'online', serviceType: 'gateway_builtin' },
        { name: 'web', status: 'partially_degraded', dataplanes: { total: 2, online: 1, offline: 1 } },
      ],
    });
    const overview = await get(cp, '/meshes/default/dataplanes+insights/web-1');
    expect(overview.body.dataplaneInsight).toEqual({ subscriptions: [subscription(true)] });
    expect((await get(cp, '/meshes/default/dataplane-insights')).body).toMatchObject({ total: 3 });
    expect((await get(cp, '/global-insight')).body).toMatchObject({
      meshes: { total: 1 },
      dataplanes: { standard: { total: 3, online: 1, offline: 2, partiallyDegraded: 0 }, gatewayBuiltin: { total: 1, online: 1, offline: 0, partiallyDegraded: 0 } },
      policies: { total: 5 },
    });
  });

  it('follows deletes', async () => {
    expect((await call(cp, 'DELETE', '/meshes/default/dataplanes/web-2')).status).toBe(200);
    expect((await call(cp, 'DELETE', '/meshes/default/retries/retry-all-default')).status).toBe(200);
    const { body } = await get(cp, '/mesh-insights/default');
    expect(body.dataplanes).toEqual({ total: 3, online: 2, offline: 1 });
    expect(body.policies).not.toHaveProperty('Retry');
    expect((await get(cp, '/meshes/default/service-insights/web')).body).toMatchObject({ status: 'online', dataplanes: { total: 1, online: 1 } });
  });

  it('counts global resources', async () => {
    expect((await get(cp, '/global-insights')).body).toEqual({
      type: 'GlobalInsights',
      creationTime: expect.stringMatching(TIMESTAMP),
      // The global secrets a standalone control plane creates at start: the user, zone-ingress and
      // zone token signing keys, and the admin user token (docs/tokens.md).
      resources: { GlobalSecret: { total: 4 }, Mesh: { total: 1 }, Zone: { total: 0 }, ZoneEgress: { total: 0 }, ZoneIngress: { total: 0 } },
    });
  });
});

describe('mesh-global', () => {
  let global: Started;

  beforeAll(async () => {
    global = await startControlPlane({ binary: 'mesh-global' });
  });

  afterAll(async () => {
    await global?.stop();
  });

  it('serves /status/zones: [] without zones, then each zone with its status', async () => {
    const empty = await fetch(`${global.url}/status/zones`);
    expect(empty.status).toBe(200);
    expect(await empty.text()).toBe('[]');
    expect((await call(global, 'PUT', '/zones/east', { type: 'Zone', name: 'east' })).status).toBe(201);
    expect((await get(global, '/status/zones')).body).toEqual([{ name: 'east', url: '', active: false }]);
    expect((await get(global, '/zones+insights')).body).toEqual({
      total: 1,
      items: [{ type: 'ZoneOverview', mesh: 'default', name: 'east', creationTime: expect.stringMatching(TIMESTAMP), modificationTime: expect.stringMatching(TIMESTAMP), zone: {} }],
      next: null,
    });
    expect((await get(global, '/zones/east/_overview')).body).toMatchObject({ name: 'east', zoneInsight: {} });
  });
});
