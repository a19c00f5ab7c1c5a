// A mesh's dataplane-token signing key, written with the mesh once this package registers it.
import { getKind } from '@mesh/model';
import { registerCaHooks } from '@mesh/pki';
import { ResourceManager } from '@mesh/resource-manager';
import type { StoredResource } from '@mesh/store';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { describe, expect, it } from 'vitest';
import { keyName, keyPlace, registerSigningKeyHooks } from './signing-keys.js';

const kind = getKind;
const ALL = [{ match: { 'mesh.io/service': '*' } }];

/** A control plane's write path with what the CA and the tokens register, as it is composed. */
function setup(mode: 'standalone' | 'global' | 'zone' = 'standalone', { signingKeyHooks = true } = {}) {
  const store = new SqliteResourceStore({ path: ':memory:' });
  const manager = new ResourceManager({ store, mode, ...(mode === 'zone' ? { zoneName: 'east' } : {}) });
  registerCaHooks(manager);
  if (signingKeyHooks) registerSigningKeyHooks(manager);
  return { store, manager };
}

/** Writes through the one write path, as the API would with this body. */
const put = (manager: ResourceManager, type: string, mesh: string, name: string, spec: Record<string, unknown>) =>
  manager.apply(kind(type), { mesh, name }, { type, ...(kind(type).scope === 'mesh' ? { mesh } : {}), name, ...spec });
const update = (manager: ResourceManager, type: string, current: StoredResource, spec: Record<string, unknown>) => put(manager, type, current.mesh, current.name, spec);

const names = async (store: SqliteResourceStore, type: string, mesh: string) =>
  (await store.list({ type, mesh, offset: 0, size: 0 })).items.map((r) => r.name);

describe('signing keys of meshes', () => {
  it('creates a mesh with the default policies and the token signing key', async () => {
    const { store, manager } = setup();
    await put(manager, 'Mesh', '', 'm1', {});
    expect(await names(store, 'TrafficPermission', 'm1')).toEqual(['allow-all-m1']);
    expect(await names(store, 'TrafficRoute', 'm1')).toEqual(['route-all-m1']);
    expect(await names(store, 'Timeout', 'm1')).toEqual(['timeout-all-m1']);
    expect(await names(store, 'CircuitBreaker', 'm1')).toEqual(['circuit-breaker-all-m1']);
    expect(await names(store, 'Retry', 'm1')).toEqual(['retry-all-m1']);
    expect(await names(store, 'Secret', 'm1')).toEqual(['dataplane-token-signing-key-m1-1']);
    const route = await store.get({ type: 'TrafficRoute', mesh: 'm1', name: 'route-all-m1' });
    expect(JSON.parse(route!.spec)).toEqual({
      sources: ALL,
      destinations: ALL,
      conf: { destination: { 'mesh.io/service': '*' }, loadBalancer: { roundRobin: {} } },
    });
  });

  it('writes a mesh and everything it owns in one store write, so a crash never leaves a mesh without its defaults', async () => {
    const { store, manager } = setup();
    const writes: Array<{ method: string; owned: string[] }> = [];
    for (const method of ['create', 'update', 'createMissing', 'writeBatch', 'delete', 'deleteMesh'] as const) {
      const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
      (store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        const owned = method === 'create' || method === 'update' ? ((args[1] as Array<{ name: string }> | undefined) ?? []) : [];
        writes.push({ method, owned: owned.map((r) => r.name).sort() });
        return original(...args);
      };
    }
    await put(manager, 'Mesh', '', 'm1', {});
    expect(writes).toEqual([
      { method: 'create', owned: ['allow-all-m1', 'circuit-breaker-all-m1', 'dataplane-token-signing-key-m1-1', 'retry-all-m1', 'route-all-m1', 'timeout-all-m1'] },
    ]);
    writes.length = 0;
    await update(manager, 'Mesh', (await store.get({ type: 'Mesh', mesh: '', name: 'm1' }))!, { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } });
    expect(writes).toEqual([{ method: 'update', owned: ['m1.ca-builtin-cert-ca-1', 'm1.ca-builtin-key-ca-1'] }]);
  });

  it('names the key of a new mesh as the token service reads it, once, and not on a zone', async () => {
    const { store, manager } = setup();
    await put(manager, 'Mesh', '', 'm1', {});
    expect(await names(store, 'Secret', 'm1')).toEqual([keyName(keyPlace('dataplane', 'm1'), 1)]);
    const key = await store.get({ type: 'Secret', mesh: 'm1', name: keyName(keyPlace('dataplane', 'm1'), 1) });
    await update(manager, 'Mesh', (await store.get({ type: 'Mesh', mesh: '', name: 'm1' }))!, { logging: {} });
    expect((await store.get({ type: 'Secret', mesh: 'm1', name: keyName(keyPlace('dataplane', 'm1'), 1) }))!.version).toBe(key!.version);
    const zone = setup('zone');
    await put(zone.manager, 'Mesh', '', 'm1', {});
    expect(await zone.store.count('Secret', 'm1')).toBe(0);
  });

  it('leaves a mesh without a key on a write path it was not registered with', async () => {
    const { store, manager } = setup('standalone', { signingKeyHooks: false });
    await put(manager, 'Mesh', '', 'm1', {});
    expect(await store.count('Secret', 'm1')).toBe(0);
    expect(await names(store, 'TrafficRoute', 'm1')).toEqual(['route-all-m1']);
  });
});
