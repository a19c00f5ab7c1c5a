import { SqliteResourceStore } from '@mesh/store-sqlite';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InsightAggregator } from './aggregator.js';

const T0 = Date.parse('2024-05-06T07:08:09.000Z');
const CONNECTED = '2024-05-06T07:00:00.000Z';
const DISCONNECTED = '2024-05-06T07:05:00.000Z';

let clock: number;
let store: SqliteResourceStore;
let aggregator: InsightAggregator;

const now = () => new Date(clock);

beforeEach(async () => {
  clock = T0;
  store = new SqliteResourceStore({ path: ':memory:', now });
  await store.create({ type: 'Mesh', mesh: '', name: 'mesh-1', spec: '{}' });
  aggregator = new InsightAggregator({ store, now, onError: (error) => { throw error; } });
  await aggregator.start();
});

afterEach(async () => {
  await aggregator.stop();
  await store.close();
});

/** Creates or replaces a resource. */
async function put(type: string, mesh: string, name: string, spec: object): Promise<void> {
  const current = await store.get({ type, mesh, name });
  if (current) await store.update({ type, mesh, name, spec: JSON.stringify(spec), version: current.version });
  else await store.create({ type, mesh, name, spec: JSON.stringify(spec) });
}

const inbound = (service: string, ready?: boolean) => ({
  port: 8080,
  tags: { 'mesh.io/service': service },
  ...(ready === undefined ? {} : { health: ready ? { ready: true } : {} }),
});

const sidecar = (...inbounds: Array<ReturnType<typeof inbound>>) => ({ networking: { address: '10.0.0.1', inbound: inbounds } });
const gateway = (service: string, type?: 'BUILTIN') => ({
  networking: { address: '10.0.0.1', gateway: { tags: { 'mesh.io/service': service }, ...(type ? { type } : {}) } },
});

interface InsightOptions {
  online?: boolean;
  meshDp?: string;
  envoy?: string;
  mtls?: { issuedBackend: string; supportedBackends: string[] };
}

function insight({ online = true, meshDp, envoy, mtls }: InsightOptions = {}) {
  const version = meshDp || envoy ? { ...(meshDp ? { meshDp: { version: meshDp } } : {}), ...(envoy ? { envoy: { version: envoy } } : {}) } : undefined;
  return {
    subscriptions: [{ id: 'sub-1', connectTime: CONNECTED, ...(online ? {} : { disconnectTime: DISCONNECTED }), ...(version ? { version } : {}) }],
    ...(mtls ? { mTLS: mtls } : {}),
  };
}

async function dataplane(name: string, spec: object, insightSpec?: object, mesh = 'mesh-1'): Promise<void> {
  await put('Dataplane', mesh, name, spec);
  if (insightSpec) await put('DataplaneInsight', mesh, name, insightSpec);
}

async function meshInsight(mesh = 'mesh-1') {
  await aggregator.settled();
  return aggregator.meshInsight(mesh);
}

async function serviceStat(name: string, mesh = 'mesh-1') {
  await aggregator.settled();
  return aggregator.serviceInsight(mesh, name)?.stat;
}

describe('InsightAggregator', () => {
  it("follows the reference's worked example of service statuses", async () => {
    await dataplane('dp1', sidecar(inbound('backend-1', true)), insight());
    await dataplane('dp2', sidecar(inbound('backend-1', true)), insight());
    await dataplane('dp3', sidecar(inbound('backend-1', false), inbound('db-1', true)), insight());
    await dataplane('dp4', sidecar(inbound('backend-1', true)), insight({ online: false }));

    expect(await serviceStat('backend-1')).toEqual({
      status: 'partially_degraded',
      dataplanes: { total: 4, online: 2, offline: 2 },
      addressPort: 'backend-1.mesh:80',
    });
    expect(await serviceStat('db-1')).toEqual({ status: 'offline', dataplanes: { total: 1, offline: 1 }, addressPort: 'db-1.mesh:80' });
    expect((await meshInsight())!.spec).toEqual({
      dataplanes: { total: 4, online: 2, offline: 1, partiallyDegraded: 1 },
      dpVersions: {
        // Partially degraded proxies are left out of a version's total, as the reference does.
        meshDp: { unknown: { total: 3, online: 2, offline: 1, partiallyDegraded: 1 } },
        envoy: { unknown: { total: 3, online: 2, offline: 1, partiallyDegraded: 1 } },
      },
      mTLS: {},
      services: { total: 2, internal: 2 },
      dataplanesByType: { standard: { total: 4, online: 2, offline: 1, partiallyDegraded: 1 }, gateway: {}, gatewayBuiltin: {}, gatewayDelegated: {} },
    });
  });

  it('tells the status of each proxy it counts, and none for a proxy it does not hold', async () => {
    await dataplane('dp1', sidecar(inbound('backend-1', true)), insight());
    await dataplane('dp2', sidecar(inbound('backend-1', false), inbound('db-1', true)), insight());
    await dataplane('dp3', sidecar(inbound('backend-1', true)), insight({ online: false }));
    await dataplane('dp4', gateway('edge'));
    await aggregator.settled();
    expect(['dp1', 'dp2', 'dp3', 'dp4', 'missing'].map((name) => aggregator.dataplaneStatus('mesh-1', name))).toEqual(['online', 'partiallyDegraded', 'offline', 'offline', undefined]);
    expect(aggregator.dataplaneStatus('elsewhere', 'dp1')).toBeUndefined();
    await put('DataplaneInsight', 'mesh-1', 'dp3', insight());
    await aggregator.settled();
    expect(aggregator.dataplaneStatus('mesh-1', 'dp3')).toBe('online');
  });

  it('counts proxies by the versions of their last subscription, `unknown` when not reported', async () => {
    await dataplane('dp1', sidecar(inbound('web')), insight({ meshDp: '1.0.3', envoy: '1.15.0' }));
    await dataplane('dp2', sidecar(inbound('web')), insight({ meshDp: '1.0.4', envoy: '1.15.0', online: false }));
    await dataplane('dp3', sidecar(inbound('web')));
    expect((await meshInsight())!.spec.dpVersions).toEqual({
      meshDp: { '1.0.3': { total: 1, online: 1 }, '1.0.4': { total: 1, offline: 1 }, unknown: { total: 1, offline: 1 } },
      envoy: { '1.15.0': { total: 2, online: 1, offline: 1 }, unknown: { total: 1, offline: 1 } },
    });
  });

  it('counts issued and supported mTLS backends', async () => {
    await dataplane('dp1', sidecar(inbound('web')), { mTLS: { issuedBackend: 'ca-1', supportedBackends: ['ca-1'] } });
    await dataplane('dp2', sidecar(inbound('web')), insight({ mtls: { issuedBackend: 'ca-2', supportedBackends: ['ca-1', 'ca-2'] } }));
    expect((await meshInsight())!.spec.mTLS).toEqual({
      issuedBackends: { 'ca-1': { total: 1, offline: 1 }, 'ca-2': { total: 1, online: 1 } },
      supportedBackends: { 'ca-1': { total: 2, online: 1, offline: 1 }, 'ca-2': { total: 1, online: 1 } },
    });
    expect(await serviceStat('web')).toMatchObject({ issuedBackends: { 'ca-1': 1, 'ca-2': 1 } });
  });

  it('counts gateways by type (DELEGATED is the default) and types their services', async () => {
    await dataplane('dp1', sidecar(inbound('web')), insight());
    await dataplane('edge', gateway('edge', 'BUILTIN'), insight());
    await dataplane('kong', gateway('kong'), insight({ online: false }));
    const spec = (await meshInsight())!.spec;
    expect(spec.dataplanesByType).toEqual({
      standard: { total: 1, online: 1 },
      gateway: { total: 2, online: 1, offline: 1 },
      gatewayBuiltin: { total: 1, online: 1 },
      gatewayDelegated: { total: 1, offline: 1 },
    });
    expect(spec.services).toEqual({ total: 3, internal: 3 });
    expect(await serviceStat('edge')).toEqual({ status: 'online', dataplanes: { total: 1, online: 1 }, serviceType: 'gateway_builtin' });
    expect(await serviceStat('kong')).toEqual({ status: 'offline', dataplanes: { total: 1, offline: 1 }, serviceType: 'gateway_delegated' });
  });

  it('counts external services and policies, not dataplanes or secrets', async () => {
    await put('ExternalService', 'mesh-1', 'httpbin', { networking: { address: 'httpbin.org:443' }, tags: { 'mesh.io/service': 'httpbin' } });
    await put('TrafficRoute', 'mesh-1', 'route-1', {});
    await put('TrafficRoute', 'mesh-1', 'route-2', {});
    await put('Timeout', 'mesh-1', 'timeout-1', {});
    await put('MeshTimeout', 'mesh-1', 'mesh-timeout-1', {});
    await put('MeshTrafficPermission', 'mesh-1', 'allow-web', {});
    await put('MeshTrafficPermission', 'mesh-1', 'deny-db', {});
    await put('Secret', 'mesh-1', 'secret-1', { data: 'eA==' });
    await dataplane('dp1', sidecar(inbound('web')));
    const spec = (await meshInsight())!.spec;
    expect(spec.policies).toEqual({ MeshTimeout: { total: 1 }, MeshTrafficPermission: { total: 2 }, Timeout: { total: 1 }, TrafficRoute: { total: 2 } });
    expect(spec.services).toEqual({ total: 2, internal: 1, external: 1 });
    expect(await serviceStat('httpbin')).toEqual({ status: 'not_available', dataplanes: {}, serviceType: 'external', addressPort: 'httpbin.org:443' });

    await store.delete({ type: 'Timeout', mesh: 'mesh-1', name: 'timeout-1' });
    await store.delete({ type: 'MeshTimeout', mesh: 'mesh-1', name: 'mesh-timeout-1' });
    await store.delete({ type: 'MeshTrafficPermission', mesh: 'mesh-1', name: 'deny-db' });
    await store.delete({ type: 'ExternalService', mesh: 'mesh-1', name: 'httpbin' });
    const after = (await meshInsight())!.spec;
    expect(after.policies).toEqual({ MeshTrafficPermission: { total: 1 }, TrafficRoute: { total: 2 } });
    expect(after.services).toEqual({ total: 1, internal: 1 });
    expect(await serviceStat('httpbin')).toEqual({ dataplanes: {}, addressPort: 'httpbin.mesh:80' });
  });

  it('answers empty figures for a new mesh, none for a missing or deleted one', async () => {
    await store.create({ type: 'Mesh', mesh: '', name: 'mesh-2', spec: '{}' });
    expect(await meshInsight('mesh-2')).toEqual({
      mesh: 'mesh-2',
      creationTime: '2024-05-06T07:08:09.000Z',
      modificationTime: '2024-05-06T07:08:09.000Z',
      spec: { dataplanes: {}, dpVersions: {}, mTLS: {}, services: {}, dataplanesByType: { standard: {}, gateway: {}, gatewayBuiltin: {}, gatewayDelegated: {} } },
    });
    expect(aggregator.meshNames()).toEqual(['mesh-1', 'mesh-2']);
    await store.deleteMesh('mesh-2');
    expect(await meshInsight('mesh-2')).toBeUndefined();
    expect(aggregator.serviceInsight('mesh-2', 'web')).toBeUndefined();
    expect(await meshInsight('nowhere')).toBeUndefined();
  });

  it('moves the times on when the figures change, and only then', async () => {
    clock += 1000;
    await dataplane('dp1', sidecar(inbound('web')), insight());
    const changed = await meshInsight();
    expect(changed).toMatchObject({ creationTime: '2024-05-06T07:08:09.000Z', modificationTime: '2024-05-06T07:08:10.000Z' });
    expect(aggregator.serviceInsight('mesh-1', 'web')!.modificationTime).toBe('2024-05-06T07:08:10.000Z');

    clock += 1000;
    await dataplane('dp1', { networking: { address: '10.9.9.9', inbound: [inbound('web')] } });
    expect((await meshInsight())!.modificationTime).toBe('2024-05-06T07:08:10.000Z');

    clock += 1000;
    await put('TrafficRoute', 'mesh-1', 'route-1', {});
    expect((await meshInsight())!.modificationTime).toBe('2024-05-06T07:08:12.000Z');
    // Policies do not show in service insights.
    expect(aggregator.serviceInsight('mesh-1', 'web')!.modificationTime).toBe('2024-05-06T07:08:10.000Z');
  });

  it('loads what the store holds when it starts', async () => {
    await dataplane('dp1', sidecar(inbound('web', true)), insight({ meshDp: '2.5.0' }));
    await put('ExternalService', 'mesh-1', 'es', { networking: { address: 'a.b:80' }, tags: { 'mesh.io/service': 'es' } });
    await put('MeshRetry', 'mesh-1', 'retry-all', {});
    const restarted = new InsightAggregator({ store, now });
    await restarted.start();
    expect(restarted.meshInsight('mesh-1')!.spec.policies).toEqual({ MeshRetry: { total: 1 } });
    expect(restarted.meshInsight('mesh-1')!.spec).toEqual((await meshInsight())!.spec);
    expect(restarted.listServices(undefined, '')).toEqual([
      { mesh: 'mesh-1', name: 'es' },
      { mesh: 'mesh-1', name: 'web' },
    ]);
    await restarted.stop();
  });

  it('sums meshes, services and zone proxies into the global insight', async () => {
    await store.create({ type: 'Mesh', mesh: '', name: 'mesh-2', spec: '{}' });
    await dataplane('dp1', sidecar(inbound('web', true)), insight());
    await dataplane('dp2', sidecar(inbound('api', false), inbound('web', true)), insight(), 'mesh-2');
    await dataplane('dp3', sidecar(inbound('web', true)), insight(), 'mesh-2');
    await dataplane('edge', gateway('edge', 'BUILTIN'), insight({ online: false }), 'mesh-2');
    await put('ExternalService', 'mesh-2', 'es', { networking: { address: 'a.b:80' }, tags: { 'mesh.io/service': 'es' } });
    await put('TrafficRoute', 'mesh-2', 'route-1', {});
    await put('ZoneInsight', '', 'zone-1', { subscriptions: [{ connectTime: CONNECTED }] });
    await put('ZoneInsight', '', 'zone-2', { subscriptions: [{ connectTime: CONNECTED, disconnectTime: DISCONNECTED }] });
    await put('ZoneIngressInsight', '', 'ingress-1', { subscriptions: [{ connectTime: CONNECTED }] });
    await aggregator.settled();
    const full = (total: number, online: number, offline: number, partiallyDegraded: number) => ({ total, online, offline, partiallyDegraded });
    expect(await aggregator.globalInsight()).toEqual({
      createdAt: '2024-05-06T07:08:09.000Z',
      meshes: { total: 2 },
      dataplanes: { standard: full(3, 2, 0, 1), gatewayBuiltin: full(1, 0, 1, 0), gatewayDelegated: full(0, 0, 0, 0) },
      policies: { total: 1 },
      services: {
        // web online in mesh-1 and partially degraded in mesh-2; api offline (dp2 counts as offline).
        internal: full(3, 1, 1, 1),
        external: { total: 1 },
        gatewayBuiltin: full(1, 0, 1, 0),
        gatewayDelegated: full(0, 0, 0, 0),
      },
      zones: { controlPlanes: { online: 1, total: 2 }, zoneIngresses: { online: 1, total: 1 }, zoneEgresses: { online: 0, total: 0 } },
    });
  });

  it('hands out the same insight objects until their figures change', async () => {
    await dataplane('dp1', sidecar(inbound('web')), insight());
    await dataplane('dp2', sidecar(inbound('api')), insight());
    const mesh = await meshInsight();
    const web = aggregator.serviceInsight('mesh-1', 'web');
    expect(await meshInsight()).toBe(mesh);
    expect(aggregator.serviceInsight('mesh-1', 'web')).toBe(web);

    // A change that moves no figure (an address) keeps them.
    await dataplane('dp1', { networking: { address: '10.9.9.9', inbound: [inbound('web')] } });
    expect(await meshInsight()).toBe(mesh);
    expect(aggregator.serviceInsight('mesh-1', 'web')).toBe(web);

    // A policy moves the mesh's figures, not the services'.
    await put('TrafficRoute', 'mesh-1', 'route-1', {});
    const withPolicy = await meshInsight();
    expect(withPolicy).not.toBe(mesh);
    expect(withPolicy!.spec.policies).toEqual({ TrafficRoute: { total: 1 } });
    expect(aggregator.serviceInsight('mesh-1', 'web')).toBe(web);

    // Any service changing renews every service's insight (they share the modification time).
    clock += 1000;
    await dataplane('dp2', sidecar(inbound('api')), insight({ online: false }));
    await aggregator.settled();
    const webAfter = aggregator.serviceInsight('mesh-1', 'web')!;
    expect(webAfter).not.toBe(web);
    expect(webAfter.modificationTime).toBe('2024-05-06T07:08:10.000Z');
    expect(aggregator.serviceInsight('mesh-1', 'api')!.stat).toMatchObject({ status: 'offline' });
    expect((await meshInsight())!.spec.dataplanes).toEqual({ total: 2, online: 1, offline: 1 });
  });

  it('keeps the same figures as a full recomputation through a random series of changes', async () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const meshes = ['mesh-1', 'mesh-2'];
    const services = ['web', 'api', 'db', 'edge'];
    const versions = ['1.0.0', '2.5.0', undefined];
    await store.create({ type: 'Mesh', mesh: '', name: 'mesh-2', spec: '{}' });

    const randomDataplane = () => {
      if (random() < 0.2) return gateway(pick(services), random() < 0.5 ? 'BUILTIN' : undefined);
      const count = Math.floor(random() * 3);
      return sidecar(...Array.from({ length: count }, () => inbound(pick(services), pick([true, false, undefined]))));
    };
    const randomInsight = () =>
      insight({
        online: random() < 0.6,
        meshDp: pick(versions),
        envoy: pick(versions),
        ...(random() < 0.4 ? { mtls: { issuedBackend: pick(['ca-1', 'ca-2']), supportedBackends: random() < 0.5 ? ['ca-1'] : ['ca-1', 'ca-2'] } } : {}),
      });
    const removeIfPresent = async (type: string, mesh: string, name: string) => {
      if (await store.get({ type, mesh, name })) await store.delete({ type, mesh, name });
    };

    for (let step = 0; step < 400; step++) {
      const mesh = pick(meshes);
      const name = pick(['a', 'b', 'c', 'd', 'e']);
      const action = random();
      if (action < 0.3) await put('Dataplane', mesh, name, randomDataplane());
      else if (action < 0.55) await put('DataplaneInsight', mesh, name, randomInsight());
      else if (action < 0.65) await removeIfPresent('Dataplane', mesh, name);
      else if (action < 0.72) await removeIfPresent('DataplaneInsight', mesh, name);
      else if (action < 0.8) await put('ExternalService', mesh, name, { networking: { address: `${name}.example:443` }, tags: { 'mesh.io/service': pick(services) } });
      else if (action < 0.85) await removeIfPresent('ExternalService', mesh, name);
      else if (action < 0.92) await put(pick(['TrafficRoute', 'HealthCheck', 'ProxyTemplate']), mesh, name, {});
      else if (action < 0.97) await removeIfPresent(pick(['TrafficRoute', 'HealthCheck', 'ProxyTemplate']), mesh, name);
      else {
        await store.deleteMesh(mesh);
        await store.create({ type: 'Mesh', mesh: '', name: mesh, spec: '{}' });
      }

      if (step % 20 === 19) {
        await aggregator.settled();
        const recomputed = new InsightAggregator({ store, now });
        await recomputed.start();
        for (const m of meshes) {
          expect(aggregator.meshInsight(m)!.spec).toEqual(recomputed.meshInsight(m)!.spec);
          const listed = aggregator.listServices(m, '');
          expect(listed).toEqual(recomputed.listServices(m, ''));
          for (const service of listed) expect(aggregator.serviceInsight(m, service.name)!.stat).toEqual(recomputed.serviceInsight(m, service.name)!.stat);
        }
        expect(await aggregator.globalInsight()).toEqual(await recomputed.globalInsight());
        await recomputed.stop();
      }
    }
  });

  it('answers from its tallies, without reading the store, with 10,000 dataplanes', async () => {
    const services = Array.from({ length: 500 }, (_, i) => `svc-${i}`);
    const resources = Array.from({ length: 10_000 }, (_, i) => [
      { type: 'Dataplane', mesh: 'mesh-1', name: `dp-${i}`, spec: JSON.stringify(sidecar(inbound(services[i % services.length]!, i % 7 !== 0))) },
      { type: 'DataplaneInsight', mesh: 'mesh-1', name: `dp-${i}`, spec: JSON.stringify(insight({ online: i % 3 !== 0, meshDp: '2.5.0' })) },
    ]).flat();
    await store.createMissing(resources);
    await aggregator.settled();
    const reads = [vi.spyOn(store, 'get'), vi.spyOn(store, 'list'), vi.spyOn(store, 'count')];

    expect(aggregator.meshInsight('mesh-1')!.spec.dataplanes.total).toBe(10_000);
    const listed = aggregator.listServices('mesh-1', '');
    expect(listed).toHaveLength(500);
    for (const service of listed.slice(0, 100)) expect(aggregator.serviceInsight('mesh-1', service.name)!.stat.dataplanes.total).toBe(20);

    for (const read of reads) expect(read).not.toHaveBeenCalled();
  });
});

describe('when changes are applied', () => {
  it('after the writes that made them have answered, all of one turn together, and before any read that waits', async () => {
    await Promise.all(['web-1', 'web-2', 'web-3'].map((name) => put('Dataplane', 'mesh-1', name, sidecar(inbound('web')))));
    // A write does not wait for the figures it moves (docs/insights.md, Freshness).
    expect(aggregator.meshInsight('mesh-1')?.spec.dataplanes.total ?? 0).toBe(0);
    expect(await serviceStat('web')).toMatchObject({ dataplanes: { total: 3 } });
    expect((await meshInsight())?.spec.dataplanes.total).toBe(3);
  });
});

describe('insights altered by each change', () => {
  it('tells, in revision order, which mesh and service insights a change altered and their new values', async () => {
    const told: Array<[number, string[]]> = [];
    aggregator.onApplied((change, insights) =>
      told.push([change.revision, insights.map((i) => `${i.type} ${i.name} ${i.insight ? ('spec' in i.insight ? i.insight.spec.dataplanes.total : i.insight.stat.dataplanes.total) : 'gone'}`)]),
    );
    await put('Dataplane', 'mesh-1', 'web-1', sidecar(inbound('web')));
    await put('Dataplane', 'mesh-1', 'web-1', sidecar(inbound('api')));
    await store.create({ type: 'Mesh', mesh: '', name: 'mesh-2', spec: '{}' });
    await store.deleteMesh('mesh-1');
    await aggregator.settled();
    expect(told).toEqual([
      [2, ['MeshInsight mesh-1 1', 'ServiceInsight web 1']],
      // The proxy's service changed: one service goes, the other comes.
      [3, ['MeshInsight mesh-1 1', 'ServiceInsight web gone', 'ServiceInsight api 1']],
      [4, ['MeshInsight mesh-2 undefined']],
      [5, ['MeshInsight mesh-1 gone', 'ServiceInsight api gone']],
      // The mesh's own proxy goes with it: its mesh is no longer there to alter.
      [6, []],
    ]);
    expect(aggregator.meshInsight('mesh-2')).toBe(aggregator.meshInsight('mesh-2'));
  });
});
