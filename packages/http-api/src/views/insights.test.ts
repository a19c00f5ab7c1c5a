// The insight, overview and `_resources/dataplanes` endpoints, in process: a real server over an
// in-memory store. Insight records are seeded through the store, as the xDS server will write them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InsightAggregator } from '@mesh/insights';
import type { Mode } from '@mesh/model';
import { registerCaHooks } from '@mesh/pki';
import { ResourceManager } from '@mesh/resource-manager';
import type { ResourceStore } from '@mesh/store';
import { registerSigningKeyHooks } from '@mesh/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ONLY_RULES } from '../access.js';
import { createApiApp } from '../api.js';
import { openTestStore } from '../testing.js';
import { cursorOf } from '../pagination.js';
import type { ApiContext } from '../context.js';

const T0 = '2024-05-06T07:08:09.000Z';
const CONNECTED = '2024-05-06T07:00:00.000Z';
const DISCONNECTED = '2024-05-06T07:05:00.000Z';

interface Api {
  url: string;
  store: ResourceStore;
  get(path: string): Promise<{ status: number; body: any; text: string }>;
  put(path: string, body: unknown): Promise<{ status: number; body: any }>;
  /** Creates a resource straight in the store (insights, or kinds the mode refuses over HTTP). */
  seed(type: string, mesh: string, name: string, spec: object): Promise<void>;
  close(): Promise<void>;
}

async function startApi(mode: Mode): Promise<Api> {
  const now = () => new Date(T0);
  const store = await openTestStore(now);
  const manager = new ResourceManager({ store, mode });
  registerCaHooks(manager);
  registerSigningKeyHooks(manager);
  await manager.ensureDefaultMesh();
  const insights = new InsightAggregator({ store, now });
  await insights.start();
  // A cast, so these tests keep compiling while the context grows fields they do not use.
  const ctx = {
    manager,
    insights,
    mode,
    readOnly: false,
    zoneName: undefined,
    access: { localhostIsAdmin: true, rules: ADMIN_ONLY_RULES },
    corsAllowedDomains: ['.*'],
    logger: { error() {} },
    info: { hostname: 'test-host', product: 'Mesh', version: '0.0.0', instanceId: '00000000-0000-4000-8000-000000000000', clusterId: '' },
    effectiveConfig: {},
  } as unknown as ApiContext;
  const server: Server = createServer(createApiApp(ctx));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    store,
    async get(path) {
      const response = await fetch(url + path);
      const text = await response.text();
      return { status: response.status, body: JSON.parse(text), text };
    },
    async put(path, body) {
      const response = await fetch(url + path, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, body: await response.json() };
    },
    async seed(type, mesh, name, spec) {
      await store.create({ type, mesh, name, spec: JSON.stringify(spec) });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await insights.stop();
      await store.close();
    },
  };
}

const notFound = (title = 'Could not retrieve a resource') => ({ type: '/std-errors', status: 404, title, detail: 'Not found', details: 'Not found' });

const subscription = (online: boolean, version?: string) => ({
  id: '5e3c0e4c-2f0a-4b8e-9c1d-6a7b8c9d0e1f',
  controlPlaneInstanceId: '00000000-0000-4000-8000-000000000000',
  connectTime: CONNECTED,
  ...(online ? {} : { disconnectTime: DISCONNECTED }),
  status: { lastUpdateTime: CONNECTED, total: { responsesSent: '3', responsesAcknowledged: '3' }, cds: { responsesSent: '1', responsesAcknowledged: '1' }, eds: {}, lds: {}, rds: {} },
  ...(version ? { version: { meshDp: { version }, envoy: { version: '1.28.0', build: 'abc', meshDpCompatible: true } } } : {}),
});

const dataplane = (name: string, networking: object, mesh = 'default') => ({ type: 'Dataplane', mesh, name, networking: { address: '10.0.0.1', ...networking } });
const sidecar = (name: string, service: string, tags: Record<string, string> = {}, mesh = 'default') =>
  dataplane(name, { inbound: [{ port: 8080, servicePort: 80, tags: { 'mesh.io/service': service, ...tags } }] }, mesh);

const DEFAULT_POLICIES = { CircuitBreaker: { total: 1 }, Retry: { total: 1 }, Timeout: { total: 1 }, TrafficPermission: { total: 1 }, TrafficRoute: { total: 1 } };
const NO_PROXIES_BY_TYPE = { standard: {}, gateway: {}, gatewayBuiltin: {}, gatewayDelegated: {} };

describe('on a standalone control plane', () => {
  let api: Api;

  beforeAll(async () => {
    api = await startApi('standalone');
    expect((await api.put('/meshes/other', { type: 'Mesh', name: 'other' })).status).toBe(201);
    for (const dp of [
      sidecar('web-1', 'web', { version: 'v1' }),
      sidecar('web-2', 'web', { version: 'v2' }),
      sidecar('backend-1', 'backend', { team: 'core' }),
      dataplane('edge', { gateway: { type: 'BUILTIN', tags: { 'mesh.io/service': 'edge' } } }),
      dataplane('kong', { gateway: { tags: { 'mesh.io/service': 'kong' } } }),
      sidecar('api-1', 'api', {}, 'other'),
    ]) {
      expect((await api.put(`/meshes/${dp.mesh}/dataplanes/${dp.name}`, dp)).status).toBe(201);
    }
    await api.seed('DataplaneInsight', 'default', 'web-1', {
      subscriptions: [subscription(true, '2.5.0')],
      mTLS: { certificateExpirationTime: '2024-05-07T07:00:00Z', issuedBackend: 'ca-1', supportedBackends: ['ca-1'], certificateRegenerations: 1 },
    });
    await api.seed('DataplaneInsight', 'default', 'web-2', { subscriptions: [subscription(false, '2.5.0')] });
    await api.seed('DataplaneInsight', 'default', 'edge', { subscriptions: [subscription(true)] });
    await api.put('/meshes/default/external-services/httpbin', {
      type: 'ExternalService',
      mesh: 'default',
      name: 'httpbin',
      networking: { address: 'httpbin.org:443' },
      tags: { 'mesh.io/service': 'httpbin' },
    });
  });

  afterAll(async () => {
    await api.close();
  });

  describe('/mesh-insights', () => {
    it('shows the figures of a mesh', async () => {
      const reply = await api.get('/mesh-insights/default');
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        type: 'MeshInsight',
        name: 'default',
        creationTime: T0,
        modificationTime: T0,
        lastSync: T0,
        dataplanes: { total: 5, online: 2, offline: 3 },
        policies: DEFAULT_POLICIES,
        dpVersions: {
          meshDp: { '2.5.0': { total: 2, online: 1, offline: 1 }, unknown: { total: 3, online: 1, offline: 2 } },
          envoy: { '1.28.0': { total: 2, online: 1, offline: 1 }, unknown: { total: 3, online: 1, offline: 2 } },
        },
        mTLS: { issuedBackends: { 'ca-1': { total: 1, online: 1 } }, supportedBackends: { 'ca-1': { total: 1, online: 1 } } },
        services: { total: 5, internal: 4, external: 1 },
        dataplanesByType: {
          standard: { total: 3, online: 1, offline: 2 },
          gateway: { total: 2, online: 1, offline: 1 },
          gatewayBuiltin: { total: 1, online: 1 },
          gatewayDelegated: { total: 1, offline: 1 },
        },
      });
      // The reference's key order: meta, then the spec in field order.
      expect(Object.keys(reply.body)).toEqual([
        'type', 'name', 'creationTime', 'modificationTime', 'lastSync', 'dataplanes', 'policies', 'dpVersions', 'mTLS', 'services', 'dataplanesByType',
      ]);
    });

    it('lists every mesh, paged, with a name filter', async () => {
      const all = await api.get('/mesh-insights');
      expect(all.body).toMatchObject({ total: 2, items: [{ name: 'default' }, { name: 'other' }], next: null });
      expect(all.body.items[1]).toEqual({
        type: 'MeshInsight',
        name: 'other',
        creationTime: T0,
        modificationTime: T0,
        lastSync: T0,
        dataplanes: { total: 1, offline: 1 },
        policies: DEFAULT_POLICIES,
        dpVersions: { meshDp: { unknown: { total: 1, offline: 1 } }, envoy: { unknown: { total: 1, offline: 1 } } },
        mTLS: {},
        services: { total: 1, internal: 1 },
        dataplanesByType: { ...NO_PROXIES_BY_TYPE, standard: { total: 1, offline: 1 } },
      });
      const first = await api.get('/mesh-insights?size=1');
      expect(first.body).toMatchObject({ total: 2, items: [{ name: 'default' }], next: `${api.url}/mesh-insights?offset=${cursorOf({ mesh: '', name: 'default' })}&size=1` });
      expect((await api.get(first.body.next.slice(api.url.length))).body).toMatchObject({ total: 2, items: [{ name: 'other' }], next: null });
      expect((await api.get('/mesh-insights?size=1&offset=1')).body).toMatchObject({ total: 2, items: [{ name: 'other' }], next: null });
      expect((await api.get('/mesh-insights?name=oth')).body).toMatchObject({ total: 1, items: [{ name: 'other' }] });
    });

    it('answers 404 for a mesh that does not exist, 400 for a bad page', async () => {
      expect(await api.get('/mesh-insights/nowhere')).toMatchObject({ status: 404, body: notFound() });
      expect(await api.get('/mesh-insights?size=abc')).toMatchObject({ status: 400, body: { title: 'Could not retrieve resources', detail: 'Invalid page size' } });
    });

    it('follows creates and deletes', async () => {
      await api.put('/meshes/other/dataplanes/api-2', sidecar('api-2', 'api', {}, 'other'));
      await api.put('/meshes/other/traffic-logs/log-1', { type: 'TrafficLog', mesh: 'other', name: 'log-1', sources: [{ match: { 'mesh.io/service': '*' } }], destinations: [{ match: { 'mesh.io/service': '*' } }] });
      expect((await api.get('/mesh-insights/other')).body).toMatchObject({ dataplanes: { total: 2, offline: 2 }, policies: { TrafficLog: { total: 1 } } });
      await fetch(`${api.url}/meshes/other/dataplanes/api-2`, { method: 'DELETE' });
      await fetch(`${api.url}/meshes/other/traffic-logs/log-1`, { method: 'DELETE' });
      const after = (await api.get('/mesh-insights/other')).body;
      expect(after.dataplanes).toEqual({ total: 1, offline: 1 });
      expect(after.policies).toEqual(DEFAULT_POLICIES);
    });
  });

  describe('service insights', () => {
    it('lists the services of a mesh, sorted, with their status', async () => {
      const reply = await api.get('/meshes/default/service-insights');
      expect(reply.status).toBe(200);
      const item = (name: string, stat: object) => ({ type: 'ServiceInsight', mesh: 'default', name, creationTime: T0, modificationTime: T0, ...stat });
      expect(reply.body).toEqual({
        total: 5,
        items: [
          item('backend', { status: 'offline', dataplanes: { total: 1, offline: 1 }, addressPort: 'backend.mesh:80' }),
          item('edge', { status: 'online', dataplanes: { total: 1, online: 1 }, serviceType: 'gateway_builtin' }),
          item('httpbin', { status: 'not_available', dataplanes: {}, serviceType: 'external', addressPort: 'httpbin.org:443' }),
          item('kong', { status: 'offline', dataplanes: { total: 1, offline: 1 }, serviceType: 'gateway_delegated' }),
          item('web', { status: 'partially_degraded', dataplanes: { total: 2, online: 1, offline: 1 }, issuedBackends: { 'ca-1': 1 }, addressPort: 'web.mesh:80' }),
        ],
        next: null,
      });
    });

    it('lists across meshes, filters by name and pages', async () => {
      const all = await api.get('/service-insights');
      expect(all.body.items.map((i: any) => `${i.mesh}/${i.name}`)).toEqual(['default/backend', 'default/edge', 'default/httpbin', 'default/kong', 'default/web', 'other/api']);
      expect((await api.get('/service-insights?name=b')).body).toMatchObject({ total: 3, items: [{ name: 'backend' }, { name: 'httpbin' }, { name: 'web' }] });
      const page = await api.get('/service-insights?size=2&offset=4');
      expect(page.body).toMatchObject({ total: 6, items: [{ name: 'web' }, { name: 'api' }], next: null });
      const second = (await api.get('/service-insights?size=2')).body.next;
      expect(second).toBe(`${api.url}/service-insights?offset=${cursorOf({ mesh: 'default', name: 'edge' })}&size=2`);
      expect((await api.get(second.slice(api.url.length))).body.items.map((i: any) => i.name)).toEqual(['httpbin', 'kong']);
      expect((await api.get('/meshes/nowhere/service-insights')).body).toEqual({ total: 0, items: [], next: null });
      expect(await api.get('/service-insights?offset=x')).toMatchObject({ status: 400, body: { title: 'Could not paginate resources', detail: 'Invalid offset' } });
    });

    it('shows one service; a service nothing names has empty counts; an unknown mesh is 404', async () => {
      expect((await api.get('/meshes/default/service-insights/web')).body).toMatchObject({ name: 'web', status: 'partially_degraded' });
      expect((await api.get('/meshes/default/service-insights/ghost')).body).toEqual({
        type: 'ServiceInsight',
        mesh: 'default',
        name: 'ghost',
        creationTime: T0,
        modificationTime: T0,
        dataplanes: {},
        addressPort: 'ghost.mesh:80',
      });
      expect(await api.get('/meshes/nowhere/service-insights/web')).toMatchObject({ status: 404, body: notFound() });
    });
  });

  describe('dataplane overviews', () => {
    it('joins each dataplane with its insight; a list item without one has no insight key', async () => {
      const reply = await api.get('/meshes/default/dataplanes+insights');
      expect(reply.body).toMatchObject({ total: 5, next: null });
      expect(reply.body.items.map((i: any) => i.name)).toEqual(['backend-1', 'edge', 'kong', 'web-1', 'web-2']);
      const [backend, , , web1] = reply.body.items;
      expect(backend).toEqual({
        type: 'DataplaneOverview',
        mesh: 'default',
        name: 'backend-1',
        creationTime: T0,
        modificationTime: T0,
        dataplane: { networking: { address: '10.0.0.1', inbound: [{ port: 8080, servicePort: 80, tags: { 'mesh.io/service': 'backend', team: 'core' } }] } },
      });
      expect(web1.dataplaneInsight).toEqual({
        subscriptions: [
          {
            id: '5e3c0e4c-2f0a-4b8e-9c1d-6a7b8c9d0e1f',
            controlPlaneInstanceId: '00000000-0000-4000-8000-000000000000',
            connectTime: CONNECTED,
            status: { lastUpdateTime: CONNECTED, total: { responsesSent: '3', responsesAcknowledged: '3' }, cds: { responsesSent: '1', responsesAcknowledged: '1' }, eds: {}, lds: {}, rds: {} },
            version: { meshDp: { version: '2.5.0' }, envoy: { version: '1.28.0', build: 'abc', meshDpCompatible: true } },
          },
        ],
        mTLS: { certificateExpirationTime: '2024-05-07T07:00:00Z', issuedBackend: 'ca-1', supportedBackends: ['ca-1'], certificateRegenerations: 1 },
      });
      expect(Object.keys(web1)).toEqual(['type', 'mesh', 'name', 'creationTime', 'modificationTime', 'dataplane', 'dataplaneInsight']);
    });

    it('serves the same at /_overview, and across meshes', async () => {
      const legacy = await api.get('/meshes/default/dataplanes+insights');
      expect((await api.get('/meshes/default/dataplanes/_overview')).text).toBe(legacy.text);
      const across = await api.get('/dataplanes+insights');
      expect(across.body.items.map((i: any) => `${i.mesh}/${i.name}`)).toEqual(['default/backend-1', 'default/edge', 'default/kong', 'default/web-1', 'default/web-2', 'other/api-1']);
      expect((await api.get('/dataplanes/_overview')).text).toBe(across.text);
    });

    it('shows one dataplane, `{}` standing for a missing insight; 404 when the dataplane is missing', async () => {
      const one = await api.get('/meshes/default/dataplanes+insights/web-1');
      expect(one.body).toMatchObject({ type: 'DataplaneOverview', name: 'web-1', dataplaneInsight: { mTLS: { issuedBackend: 'ca-1' } } });
      expect((await api.get('/meshes/default/dataplanes/web-1/_overview')).text).toBe(one.text);
      expect((await api.get('/meshes/default/dataplanes+insights/backend-1')).body).toMatchObject({ name: 'backend-1', dataplaneInsight: {} });
      expect(await api.get('/meshes/default/dataplanes+insights/nowhere')).toMatchObject({ status: 404, body: notFound() });
      expect(await api.get('/meshes/default/dataplanes/nowhere/_overview')).toMatchObject({ status: 404, body: notFound() });
    });

    it('follows insights as they come and go, and dataplanes as they change, in overviews and aggregates alike', async () => {
      const paths = ['/meshes/default/dataplanes+insights', '/mesh-insights/default', '/meshes/default/service-insights', '/mesh-insights'];
      const before = await Promise.all(paths.map((path) => api.get(path)));
      const kongOverview = async () => (await api.get('/meshes/default/dataplanes+insights')).body.items.find((i: any) => i.name === 'kong');
      expect(await kongOverview()).not.toHaveProperty('dataplaneInsight');

      await api.seed('DataplaneInsight', 'default', 'kong', { subscriptions: [subscription(true)] });
      expect((await kongOverview()).dataplaneInsight).toEqual({ subscriptions: [subscription(true)] });
      expect((await api.get('/mesh-insights/default')).body.dataplanes).toEqual({ total: 5, online: 3, offline: 2 });
      expect((await api.get('/meshes/default/service-insights/kong')).body).toMatchObject({ status: 'online', dataplanes: { total: 1, online: 1 } });
      expect((await api.get('/meshes/default/service-insights')).body.items.find((i: any) => i.name === 'kong')).toMatchObject({ status: 'online' });
      expect((await api.get('/mesh-insights')).body.items.find((i: any) => i.name === 'default').dataplanes).toEqual({ total: 5, online: 3, offline: 2 });

      await api.store.delete({ type: 'DataplaneInsight', mesh: 'default', name: 'kong' });
      const kong = dataplane('kong', { gateway: { tags: { 'mesh.io/service': 'kong' } } });
      expect((await api.put('/meshes/default/dataplanes/kong', { ...kong, networking: { ...kong.networking, address: '10.0.0.9' } })).status).toBe(200);
      expect((await kongOverview()).dataplane.networking.address).toBe('10.0.0.9');
      expect((await api.put('/meshes/default/dataplanes/kong', kong)).status).toBe(200);
      const after = await Promise.all(paths.map((path) => api.get(path)));
      expect(after.map((reply) => reply.text)).toEqual(before.map((reply) => reply.text));
    });

    it('filters by name, tags and gateway, and pages', async () => {
      const names = async (query: string) => (await api.get(`/meshes/default/dataplanes+insights?${query}`)).body.items.map((i: any) => i.name);
      expect(await names('name=web')).toEqual(['web-1', 'web-2']);
      expect(await names('tag=mesh.io/service:web&tag=version:v2')).toEqual(['web-2']);
      expect(await names('tag=mesh.io/service:ed')).toEqual(['edge']);
      expect(await names('gateway=true')).toEqual(['edge', 'kong']);
      expect(await names('gateway=builtin')).toEqual(['edge']);
      expect(await names('gateway=DELEGATED')).toEqual(['kong']);
      expect(await names('gateway=false')).toEqual(['backend-1', 'web-1', 'web-2']);
      const page = await api.get('/meshes/default/dataplanes/_overview?gateway=false&size=2');
      expect(page.body).toMatchObject({ total: 3, next: `${api.url}/meshes/default/dataplanes/_overview?gateway=false&offset=${cursorOf({ mesh: 'default', name: 'web-1' })}&size=2` });
      expect((await api.get(page.body.next.slice(api.url.length))).body).toMatchObject({ total: 3, items: [{ name: 'web-2' }], next: null });
      expect(await api.get('/meshes/default/dataplanes+insights?gateway=foo')).toMatchObject({
        status: 400,
        body: {
          title: 'Could not retrieve resources',
          detail: 'Resource is not valid',
          invalid_parameters: [{ field: '/meshes/{mesh}/dataplanes+insights.gateway', reason: "shoud use `true`, `false`, 'builtin' or 'delegated' instead of foo" }],
        },
      });
      expect((await api.get('/meshes/nowhere/dataplanes+insights')).body).toEqual({ total: 0, items: [], next: null });
    });

    it('filters proxies by status as the mesh insight counts them, with the other filters, paged', async () => {
      const list = async (query: string) => (await api.get(`/meshes/default/dataplanes/_overview?${query}`)).body;
      const names = async (query: string) => (await list(query)).items.map((i: any) => i.name);
      expect(await names('status=online')).toEqual(['edge', 'web-1']);
      expect(await names('status=offline')).toEqual(['backend-1', 'kong', 'web-2']);
      expect(await names('status=partially_degraded')).toEqual([]);
      expect(await names('status=offline&gateway=false&tag=mesh.io/service:web')).toEqual(['web-2']);
      expect((await api.get('/dataplanes+insights?status=offline')).body.items.map((i: any) => `${i.mesh}/${i.name}`)).toEqual(['default/backend-1', 'default/kong', 'default/web-2', 'other/api-1']);
      const first = await list('status=offline&size=2');
      expect(first).toMatchObject({ total: 3, items: [{ name: 'backend-1' }, { name: 'kong' }], next: `${api.url}/meshes/default/dataplanes/_overview?offset=${cursorOf({ mesh: 'default', name: 'kong' })}&size=2&status=offline` });
      expect((await api.get(first.next.slice(api.url.length))).body).toMatchObject({ total: 3, items: [{ name: 'web-2' }], next: null });
      expect(await list('status=offline&offset=1&size=1')).toMatchObject({ total: 3, items: [{ name: 'kong' }] });
      expect(await api.get('/meshes/default/dataplanes/_overview?status=up')).toMatchObject({
        status: 400,
        body: { title: 'Could not retrieve resources', invalid_parameters: [{ field: 'status', reason: 'must be one of online, offline, partially_degraded, got up' }] },
      });
    });
  });

  describe('zone, zone ingress and zone egress overviews', () => {
    beforeAll(async () => {
      await api.put('/zones/zone-1', { type: 'Zone', name: 'zone-1', enabled: true });
      await api.put('/zones/zone-2', { type: 'Zone', name: 'zone-2' });
      await api.seed('ZoneInsight', '', 'zone-1', {
        subscriptions: [
          {
            id: '8d6f1c2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f',
            globalInstanceId: '00000000-0000-4000-8000-000000000000',
            connectTime: CONNECTED,
            status: { lastUpdateTime: CONNECTED, total: { responsesSent: '2', responsesAcknowledged: '2' }, stat: { Mesh: { responsesSent: '2', responsesAcknowledged: '2' } } },
            version: { meshCp: { version: '2.5.0', gitTag: '2.5.0', gitCommit: 'abc', buildDate: '2023-11-20T10:00:00Z' } },
            config: '{"mode":"zone"}',
          },
        ],
      });
      await api.put('/zone-ingresses/ingress-1', {
        type: 'ZoneIngress',
        name: 'ingress-1',
        zone: 'zone-1',
        networking: { address: '10.0.0.10', advertisedAddress: '34.1.2.3', port: 10001, advertisedPort: 10001 },
        availableServices: [{ tags: { 'mesh.io/service': 'web' }, instances: 2, mesh: 'default' }],
      });
      await api.seed('ZoneIngressInsight', '', 'ingress-1', { subscriptions: [{ ...subscription(true, '2.5.0'), generation: 3 }] });
      await api.put('/zoneegresses/egress-1', { type: 'ZoneEgress', name: 'egress-1', zone: 'zone-1', networking: { address: '10.0.0.20', port: 10002 } });
    });

    it('serves ZoneOverview with a mesh key, at every path', async () => {
      const list = await api.get('/zones+insights');
      expect(list.body).toMatchObject({ total: 2, next: null });
      expect(list.body.items[0]).toEqual({
        type: 'ZoneOverview',
        mesh: 'default',
        name: 'zone-1',
        creationTime: T0,
        modificationTime: T0,
        zone: { enabled: true },
        zoneInsight: {
          subscriptions: [
            {
              id: '8d6f1c2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f',
              globalInstanceId: '00000000-0000-4000-8000-000000000000',
              connectTime: CONNECTED,
              status: { lastUpdateTime: CONNECTED, total: { responsesSent: '2', responsesAcknowledged: '2' }, stat: { Mesh: { responsesSent: '2', responsesAcknowledged: '2' } } },
              version: { meshCp: { version: '2.5.0', gitTag: '2.5.0', gitCommit: 'abc', buildDate: '2023-11-20T10:00:00Z' } },
              config: '{"mode":"zone"}',
            },
          ],
        },
      });
      expect(list.body.items[1]).toEqual({ type: 'ZoneOverview', mesh: 'default', name: 'zone-2', creationTime: T0, modificationTime: T0, zone: {} });
      expect((await api.get('/zones/_overview')).text).toBe(list.text);
      expect((await api.get('/zones+insights/zone-2')).body).toMatchObject({ name: 'zone-2', zoneInsight: {} });
      expect((await api.get('/zones/zone-1/_overview')).text).toBe((await api.get('/zones+insights/zone-1')).text);
      expect((await api.get('/zones/_overview?name=2')).body).toMatchObject({ total: 1, items: [{ name: 'zone-2' }] });
      expect(await api.get('/zones+insights/zone-9')).toMatchObject({ status: 404, body: notFound() });
    });

    it('serves ZoneIngressOverview and ZoneEgressOverview', async () => {
      const ingresses = await api.get('/zoneingresses+insights');
      expect(ingresses.body.items).toEqual([
        {
          type: 'ZoneIngressOverview',
          name: 'ingress-1',
          creationTime: T0,
          modificationTime: T0,
          zoneIngress: {
            zone: 'zone-1',
            networking: { address: '10.0.0.10', advertisedAddress: '34.1.2.3', port: 10001, advertisedPort: 10001 },
            availableServices: [{ tags: { 'mesh.io/service': 'web' }, instances: 2, mesh: 'default' }],
          },
          zoneIngressInsight: { subscriptions: [expect.objectContaining({ generation: 3, version: expect.objectContaining({ envoy: { version: '1.28.0', build: 'abc', meshDpCompatible: true } }) })] },
        },
      ]);
      expect((await api.get('/zone-ingresses/_overview')).text).toBe(ingresses.text);
      expect((await api.get('/zone-ingresses/ingress-1/_overview')).text).toBe((await api.get('/zoneingresses+insights/ingress-1')).text);

      const egresses = await api.get('/zoneegressoverviews');
      expect(egresses.body).toEqual({
        total: 1,
        items: [{ type: 'ZoneEgressOverview', name: 'egress-1', creationTime: T0, modificationTime: T0, zoneEgress: { zone: 'zone-1', networking: { address: '10.0.0.20', port: 10002 } } }],
        next: null,
      });
      expect((await api.get('/zoneegresses/_overview')).text).toBe(egresses.text);
      expect((await api.get('/zoneegresses/egress-1/_overview')).body).toMatchObject({ name: 'egress-1', zoneEgressInsight: {} });
      expect(await api.get('/zoneegressoverviews/nowhere')).toMatchObject({ status: 404, body: notFound() });
    });

    it('lists the insight records themselves, which the API never writes', async () => {
      expect((await api.get('/meshes/default/dataplane-insights')).body).toMatchObject({ total: 3, items: [{ type: 'DataplaneInsight', name: 'edge' }, { name: 'web-1' }, { name: 'web-2' }] });
      expect((await api.get('/zone-insights')).body).toMatchObject({ total: 1, items: [{ type: 'ZoneInsight', name: 'zone-1' }] });
      expect((await api.get('/zone-ingress-insights/ingress-1')).body).toMatchObject({ type: 'ZoneIngressInsight', name: 'ingress-1' });
      expect((await api.get('/zoneegressinsights')).body).toEqual({ total: 0, items: [], next: null });
      const refused = await api.put('/meshes/default/dataplane-insights/web-1', { type: 'DataplaneInsight', mesh: 'default', name: 'web-1' });
      expect(refused).toMatchObject({ status: 405, body: { title: 'Method not Allowed' } });
    });
  });

  describe('global summaries', () => {
    it('/global-insights counts the global kinds', async () => {
      const reply = await api.get('/global-insights');
      expect(reply.body).toEqual({
        type: 'GlobalInsights',
        creationTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        resources: { GlobalSecret: { total: 0 }, Mesh: { total: 2 }, Zone: { total: 2 }, ZoneEgress: { total: 1 }, ZoneIngress: { total: 1 } },
      });
    });

    it('/global-insight sums meshes, proxies, services and zones', async () => {
      const { body } = await api.get('/global-insight');
      const full = (total: number, online: number, offline: number, partiallyDegraded = 0) => ({ total, online, offline, partiallyDegraded });
      expect(body).toEqual({
        createdAt: T0,
        meshes: { total: 2 },
        dataplanes: { standard: full(4, 1, 3), gatewayBuiltin: full(1, 1, 0), gatewayDelegated: full(1, 0, 1) },
        policies: { total: 10 },
        services: { internal: full(3, 0, 2, 1), external: { total: 1 }, gatewayBuiltin: full(1, 1, 0), gatewayDelegated: full(1, 0, 1) },
        zones: { controlPlanes: { online: 1, total: 1 }, zoneIngresses: { online: 1, total: 1 }, zoneEgresses: { online: 0, total: 0 } },
      });
    });

    it('/status/zones is served by a global control plane only', async () => {
      expect(await api.get('/status/zones')).toMatchObject({
        status: 404,
        body: { type: '/std-errors', status: 404, detail: '/status/zones is served by a global control plane' },
      });
    });
  });

  describe('/meshes/{mesh}/{policy}/{name}/_resources/dataplanes', () => {
    beforeAll(async () => {
      await api.put('/meshes/default/retries/web-to-backend', {
        type: 'Retry',
        mesh: 'default',
        name: 'web-to-backend',
        sources: [{ match: { 'mesh.io/service': 'web', version: 'v1' } }],
        destinations: [{ match: { 'mesh.io/service': 'backend' } }],
        conf: { http: { numRetries: 5 } },
      });
      await api.put('/meshes/default/proxytemplates/gateways', {
        type: 'ProxyTemplate',
        mesh: 'default',
        name: 'gateways',
        selectors: [{ match: { 'mesh.io/service': 'edge' } }, { match: { 'mesh.io/service': 'kong' } }],
        conf: { imports: ['default-proxy'] },
      });
    });

    it('lists the dataplanes a source/destination policy selects', async () => {
      expect((await api.get('/meshes/default/retries/web-to-backend/_resources/dataplanes')).body).toEqual({
        total: 2,
        items: [
          { type: 'Dataplane', mesh: 'default', name: 'backend-1' },
          { type: 'Dataplane', mesh: 'default', name: 'web-1' },
        ],
      });
      // The default route selects every service.
      expect((await api.get('/meshes/default/traffic-routes/route-all-default/_resources/dataplanes')).body.total).toBe(5);
    });

    it('lists the dataplanes a selector policy selects, gateways by their tags', async () => {
      expect((await api.get('/meshes/default/proxytemplates/gateways/_resources/dataplanes')).body).toEqual({
        total: 2,
        items: [
          { type: 'Dataplane', mesh: 'default', name: 'edge' },
          { type: 'Dataplane', mesh: 'default', name: 'kong' },
        ],
      });
    });

    it('filters by name and pages', async () => {
      const page = await api.get('/meshes/default/traffic-routes/route-all-default/_resources/dataplanes?name=web&size=1');
      expect(page.body).toEqual({
        total: 2,
        items: [{ type: 'Dataplane', mesh: 'default', name: 'web-1' }],
        next: `${api.url}/meshes/default/traffic-routes/route-all-default/_resources/dataplanes?name=web&offset=${cursorOf({ mesh: 'default', name: 'web-1' })}&size=1`,
      });
      expect((await api.get(page.body.next.slice(api.url.length))).body).toEqual({ total: 2, items: [{ type: 'Dataplane', mesh: 'default', name: 'web-2' }] });
    });

    it('answers the same at `-resources/dataplanes`, the path the reference command-line client asks', async () => {
      for (const path of [
        '/meshes/default/retries/web-to-backend',
        '/meshes/default/proxytemplates/gateways',
        '/meshes/default/traffic-routes/route-all-default',
        '/meshes/default/retries/nowhere',
      ]) {
        const underscore = await api.get(`${path}/_resources/dataplanes?size=1`);
        const dash = await api.get(`${path}/-resources/dataplanes?size=1`);
        expect({ status: dash.status, body: dash.body }, path).toEqual({
          status: underscore.status,
          body: underscore.body.next ? { ...underscore.body, next: underscore.body.next.replace('/_resources/', '/-resources/') } : underscore.body,
        });
      }
      expect((await api.get('/meshes/default/retries/web-to-backend/-resources/dataplanes')).status).toBe(200);
    });

    it('answers 404 for a missing policy, 400 for a bad page', async () => {
      expect(await api.get('/meshes/default/retries/nowhere/_resources/dataplanes')).toMatchObject({ status: 404, body: notFound('Could not retrieve policy') });
      expect(await api.get('/meshes/default/retries/web-to-backend/_resources/dataplanes?size=x')).toMatchObject({
        status: 400,
        body: { title: 'Could not retrieve policy', detail: 'Invalid page size' },
      });
    });
  });
});

describe('on a global control plane', () => {
  let api: Api;

  beforeAll(async () => {
    api = await startApi('global');
  });

  afterAll(async () => {
    await api.close();
  });

  it('/status/zones answers [] without zones', async () => {
    const reply = await api.get('/status/zones');
    expect(reply).toMatchObject({ status: 200, text: '[]' });
  });

  it('/status/zones reports each zone as active when connected and enabled, with the address it reported', async () => {
    await api.put('/zones/zone-1', { type: 'Zone', name: 'zone-1' });
    await api.put('/zones/zone-2', { type: 'Zone', name: 'zone-2', enabled: false });
    await api.put('/zones/zone-3', { type: 'Zone', name: 'zone-3' });
    await api.seed('ZoneInsight', '', 'zone-1', { subscriptions: [{ id: 'a', connectTime: CONNECTED, url: 'grpcs://zone-1.example:5685' }] });
    await api.seed('ZoneInsight', '', 'zone-2', { subscriptions: [{ id: 'b', connectTime: CONNECTED }] });
    expect((await api.get('/status/zones')).body).toEqual([
      { name: 'zone-1', url: 'grpcs://zone-1.example:5685', active: true },
      { name: 'zone-2', url: '', active: false },
      { name: 'zone-3', url: '', active: false },
    ]);
  });

  it('shows dataplanes that zones synced up', async () => {
    await api.seed('Dataplane', 'default', 'zone-1.web-1', { networking: sidecar('zone-1.web-1', 'web').networking });
    await api.seed('DataplaneInsight', 'default', 'zone-1.web-1', { subscriptions: [subscription(true)] });
    expect((await api.get('/mesh-insights/default')).body.dataplanes).toEqual({ total: 1, online: 1 });
    expect((await api.get('/meshes/default/dataplanes+insights/zone-1.web-1')).body).toMatchObject({ dataplaneInsight: { subscriptions: [{ connectTime: CONNECTED }] } });
  });
});
