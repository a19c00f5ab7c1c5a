import { getKind, invalidResource } from '@mesh/model';
import type { StoredResource } from '@mesh/store';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { describe, expect, it } from 'vitest';
import type { KindHooks } from './hooks.js';
import { ResourceManager } from './manager.js';

const kind = getKind;
const ALL = [{ match: { 'mesh.io/service': '*' } }];

function setup(mode: 'standalone' | 'global' | 'zone' = 'standalone', zoneName?: string) {
  const store = new SqliteResourceStore({ path: ':memory:' });
  const manager = new ResourceManager({ store, mode, ...(zoneName ? { zoneName } : {}) });
  return { store, manager };
}

/** Writes through the one write path, as the API would with this body. */
const put = (manager: ResourceManager, type: string, mesh: string, name: string, spec: Record<string, unknown>) =>
  manager.apply(kind(type), { mesh, name }, { type, ...(kind(type).scope === 'mesh' ? { mesh } : {}), name, ...spec });
const remove = (manager: ResourceManager, type: string, current: StoredResource) => manager.remove(kind(type), current);

const names = async (store: SqliteResourceStore, type: string, mesh: string) =>
  (await store.list({ type, mesh, offset: 0, size: 0 })).items.map((r) => r.name);

describe('ResourceManager', () => {
  it('skips the initial policies a mesh names, or all of them with *', async () => {
    const { store, manager } = setup();
    await put(manager, 'Mesh', '', 'some', { skipCreatingInitialPolicies: ['TrafficRoute', 'Retry'] });
    await put(manager, 'Mesh', '', 'none', { skipCreatingInitialPolicies: ['*'] });
    expect(await names(store, 'TrafficRoute', 'some')).toEqual([]);
    expect(await names(store, 'Retry', 'some')).toEqual([]);
    expect(await names(store, 'Timeout', 'some')).toEqual(['timeout-all-some']);
    expect(await store.count('TrafficPermission', 'none')).toBe(0);
  });

  it('refuses a resource in a mesh that does not exist, for every mesh-scoped kind', async () => {
    const { manager } = setup();
    const valid: Record<string, Record<string, unknown>> = {
      TrafficRoute: { sources: ALL, destinations: ALL, conf: { destination: { 'mesh.io/service': '*' } } },
      Secret: { data: 'YQ==' },
      ExternalService: { networking: { address: 'a.b:80' }, tags: { 'mesh.io/service': 'es' } },
      RateLimit: { sources: ALL, destinations: ALL, conf: { http: { requests: 10, interval: '1s' } } },
      Dataplane: { networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }] } },
    };
    for (const [name, spec] of Object.entries(valid)) {
      await expect(put(manager, name, 'ghost', 'x', spec)).rejects.toMatchObject({
        code: 'mesh_not_found',
        message: 'Mesh is not found',
        violations: [{ field: 'mesh', message: 'mesh of name ghost is not found' }],
      });
    }
  });

  it('deletes a mesh with everything it owns, but not while dataplanes are in it', async () => {
    const { store, manager } = setup();
    await put(manager, 'Mesh', '', 'm', {});
    await put(manager, 'ExternalService', 'm', 'es', { networking: { address: 'a.b:80' }, tags: { 'mesh.io/service': 'es' } });
    await put(manager, 'Secret', 'm', 's', { data: 'YQ==' });
    await put(manager, 'Dataplane', 'm', 'dp', { networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }] } });
    const mesh = (await store.get({ type: 'Mesh', mesh: '', name: 'm' }))!;
    await expect(remove(manager, 'Mesh', mesh)).rejects.toMatchObject({
      violations: [{ field: 'mesh', message: 'unable to delete mesh, there are still some dataplanes attached' }],
    });
    await remove(manager, 'Dataplane', (await store.get({ type: 'Dataplane', mesh: 'm', name: 'dp' }))!);
    await remove(manager, 'Mesh', mesh);
    for (const type of ['ExternalService', 'Secret', 'TrafficRoute', 'TrafficPermission']) expect(await store.count(type, 'm')).toBe(0);
  });

  it("refuses a dataplane the mesh's constraints exclude", async () => {
    const { manager } = setup();
    await put(manager, 'Mesh', '', 'm', { constraints: { dataplaneProxy: { requirements: [{ tags: { team: 'a' } }] } } });
    await expect(
      put(manager, 'Dataplane', 'm', 'dp', { networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web', team: 'b' } }] } }),
    ).rejects.toMatchObject({ code: 'invalid', violations: [{ field: 'networking', message: expect.stringMatching(/^dataplane cannot be a member of mesh "m" because its tags/) }] });
  });

  it('tags the inbounds of a dataplane created on a zone with the zone', async () => {
    const { store, manager } = setup('zone', 'east');
    await store.create({ type: 'Mesh', mesh: '', name: 'm', spec: '{}' });
    await put(manager, 'Dataplane', 'm', 'dp', {
      networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' }, serviceProbe: {} }] },
    });
    const stored = JSON.parse((await store.get({ type: 'Dataplane', mesh: 'm', name: 'dp' }))!.spec);
    expect(stored.networking.inbound[0]).toEqual({ port: 80, tags: { 'mesh.io/service': 'web', 'mesh.io/zone': 'east' }, serviceProbe: {}, health: { ready: false } });
  });

  it('leaves a resource as it is when asked to skip a write that stores what it holds, defaults included', async () => {
    const { store, manager } = setup('zone', 'east');
    await store.create({ type: 'Mesh', mesh: '', name: 'm', spec: '{}' });
    const body = { type: 'Dataplane', mesh: 'm', name: 'dp', networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }] } };
    const written = await manager.apply(kind('Dataplane'), { mesh: 'm', name: 'dp' }, body);
    const changes: string[] = [];
    store.onChange((change) => changes.push(`${change.operation} ${change.type} ${change.name}`));
    // Stored with the zone tag the body leaves out: the same resource, nothing written.
    const again = await manager.apply(kind('Dataplane'), { mesh: 'm', name: 'dp' }, body, { skipUnchanged: true });
    expect(again).toEqual({ created: false, resource: written.resource, warnings: [] });
    expect((await store.get({ type: 'Dataplane', mesh: 'm', name: 'dp' }))!.version).toBe(written.resource.version);
    expect(changes).toEqual([]);
    const moved = { ...body, networking: { ...body.networking, address: '10.0.0.2' } };
    const changed = await manager.apply(kind('Dataplane'), { mesh: 'm', name: 'dp' }, moved, { skipUnchanged: true });
    expect(JSON.parse(changed.resource.spec).networking.address).toBe('10.0.0.2');
    expect(changes).toEqual(['update Dataplane dp']);
    // Without the option the same write is made again, as the API does.
    await manager.apply(kind('Dataplane'), { mesh: 'm', name: 'dp' }, moved);
    expect(changes).toEqual(['update Dataplane dp', 'update Dataplane dp']);
  });

  it('keeps rate limits on external services to service-only destinations, both ways', async () => {
    const { manager } = setup();
    await put(manager, 'Mesh', '', 'm', {});
    await put(manager, 'ExternalService', 'm', 'es', { networking: { address: 'a.b:80' }, tags: { 'mesh.io/service': 'ext' } });
    const mixed = { sources: ALL, destinations: [{ match: { 'mesh.io/service': 'ext', version: 'v1' } }], conf: {} };
    await expect(put(manager, 'RateLimit', 'm', 'rl', mixed)).rejects.toMatchObject({
      violations: [{ field: 'ratelimit', message: 'RateLimit applied to external service only supports mesh.io/service as destination match' }],
    });
    await expect(put(manager, 'RateLimit', 'm', 'rl', { ...mixed, destinations: [{ match: { 'mesh.io/service': '*', version: 'v1' } }] })).rejects.toMatchObject({
      code: 'invalid',
    });
    await put(manager, 'RateLimit', 'm', 'rl2', { sources: ALL, destinations: [{ match: { 'mesh.io/service': 'other', version: 'v1' } }], conf: {} });
    await put(manager, 'RateLimit', 'm', 'rl3', { sources: ALL, destinations: [{ match: { 'mesh.io/service': 'new', version: 'v1' } }], conf: {} });
    await expect(put(manager, 'ExternalService', 'm', 'es2', { networking: { address: 'c.d:80' }, tags: { 'mesh.io/service': 'new' } })).rejects.toMatchObject({
      violations: [{ field: 'externalservice', message: "ExternalService would match RateLimit 'rl3' which includes incompatible destination matches" }],
    });
  });

  it('deletes the insight of a deleted dataplane', async () => {
    const { store, manager } = setup();
    await put(manager, 'Mesh', '', 'm', {});
    await put(manager, 'Dataplane', 'm', 'dp', { networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }] } });
    await store.create({ type: 'DataplaneInsight', mesh: 'm', name: 'dp', spec: '{}' });
    await remove(manager, 'Dataplane', (await store.get({ type: 'Dataplane', mesh: 'm', name: 'dp' }))!);
    expect(await store.get({ type: 'DataplaneInsight', mesh: 'm', name: 'dp' })).toBeUndefined();
  });

  it('creates the default mesh once', async () => {
    const { store, manager } = setup();
    await manager.ensureDefaultMesh();
    await manager.ensureDefaultMesh();
    expect(await store.count('Mesh')).toBe(1);
  });
});

describe('hooks registered by other packages', () => {
  const data = (text: string) => Buffer.from(text).toString('base64');
  const textOf = (stored: StoredResource | undefined) => Buffer.from(JSON.parse(stored!.spec).data, 'base64').toString();

  it('writes a kind nobody registered hooks for as sent, nothing along', async () => {
    const { store, manager } = setup();
    await put(manager, 'Mesh', '', 'm', {});
    const before = await store.count('Secret', 'm');
    await put(manager, 'Secret', 'm', 's', { data: data('plain') });
    expect(textOf(await store.get({ type: 'Secret', mesh: 'm', name: 's' }))).toBe('plain');
    expect(await store.count('Secret', 'm')).toBe(before + 1);
    await remove(manager, 'Secret', (await store.get({ type: 'Secret', mesh: 'm', name: 's' }))!);
    expect(await store.count('Secret', 'm')).toBe(before);
  });

  it('runs the hooks registered for a kind in the order registered, writing what each owns with the resource', async () => {
    const { store, manager } = setup();
    await put(manager, 'Mesh', '', 'm', {});
    const calls: string[] = [];
    const hooks = (name: string): KindHooks => ({
      beforeCreate(_ctx, _key, spec) {
        calls.push(`${name} create`);
        return Promise.resolve({ ...spec, data: data(`${Buffer.from(spec.data as string, 'base64').toString()}+${name}`) });
      },
      owned(_ctx, key) {
        return Promise.resolve([{ type: 'Secret', mesh: key.mesh, name: `${key.name}-${name}`, spec: JSON.stringify({ data: data(name) }) }]);
      },
      beforeDelete(_ctx, current) {
        calls.push(`${name} delete`);
        if (name === 'second' && current.name === 'guarded') return Promise.reject(invalidResource([{ field: 'name', message: 'guarded by the second' }]));
        return Promise.resolve();
      },
    });
    manager.registerHooks(getKind('Secret'), hooks('first'));
    manager.registerHooks(getKind('Secret'), hooks('second'));
    const writes: string[][] = [];
    const create = store.create.bind(store);
    store.create = (resource, owned) => {
      writes.push([resource.name, ...(owned ?? []).map((r) => r.name)]);
      return create(resource, owned);
    };
    await put(manager, 'Secret', 'm', 'guarded', { data: data('sent') });
    expect(textOf(await store.get({ type: 'Secret', mesh: 'm', name: 'guarded' }))).toBe('sent+first+second');
    expect(writes).toEqual([['guarded', 'guarded-first', 'guarded-second']]);
    expect(calls).toEqual(['first create', 'second create']);
    await expect(remove(manager, 'Secret', (await store.get({ type: 'Secret', mesh: 'm', name: 'guarded' }))!)).rejects.toMatchObject({
      violations: [{ field: 'name', message: 'guarded by the second' }],
    });
    expect(calls.slice(2)).toEqual(['first delete', 'second delete']);
    expect(await store.get({ type: 'Secret', mesh: 'm', name: 'guarded' })).toBeDefined();
  });

  it('adds registered hooks after the write path own rules of a kind, and lets only one replace its delete', async () => {
    const { store, manager } = setup();
    manager.registerHooks(getKind('Mesh'), { owned: (_ctx, key) => Promise.resolve([{ type: 'Secret', mesh: key.name, name: 'along', spec: '{}' }]) });
    await put(manager, 'Mesh', '', 'm', {});
    expect(await names(store, 'TrafficRoute', 'm')).toEqual(['route-all-m']);
    expect(await names(store, 'Secret', 'm')).toEqual(['along']);
    expect(() => manager.registerHooks(getKind('Mesh'), { delete: async () => {} })).toThrow('the delete of Mesh is already replaced');
  });
});
