// The one write path by origin: what the API, the control plane itself and zone sync may write where.
import { getKind, type AnyKind, type Mode } from '@mesh/model';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { describe, expect, it } from 'vitest';
import { ADMIN, ANONYMOUS } from './access.js';
import { ResourceManager, type KindKey } from './manager.js';
import type { SyncBatch } from './sync.js';

const ALL = [{ match: { 'mesh.io/service': '*' } }];
const ROUTE = { sources: ALL, destinations: ALL, conf: { destination: { 'mesh.io/service': '*' } } };
const DATAPLANE = { networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }] } };

function setup(mode: Mode, options: { zoneName?: string; apiReadOnly?: boolean } = {}) {
  const store = new SqliteResourceStore({ path: ':memory:' });
  return { store, manager: new ResourceManager({ store, mode, ...options }) };
}

const body = (type: string, mesh: string, name: string, spec: Record<string, unknown>) => ({ type, ...(getKind(type).scope === 'mesh' ? { mesh } : {}), name, ...spec });
const stored = async (store: SqliteResourceStore, type: string, mesh: string, name: string) => store.get({ type, mesh, name });

/**
 * What zone sync writes of one resource (its wire body), or removes (no body), through the one
 * synced path: a batch of that one copy, as zone sync applies it.
 */
async function applySyncedOne(manager: ResourceManager, kind: AnyKind, at: KindKey, origin: SyncBatch['origin'], wire?: Record<string, unknown>) {
  const { type: _type, mesh: _mesh, name: _name, ...spec } = wire ?? {};
  const resources = wire ? [{ ...at, spec: JSON.stringify(spec) }] : [];
  const changes = await manager.applySynced({ origin, full: false, owns: () => true, kinds: [{ kind, resources, removed: wire ? [] : [at] }] });
  return { created: changes.some((change) => change.operation === 'create'), resource: (await manager.get(kind, at.mesh, at.name))! };
}

describe('apply and remove by origin', () => {
  it('lets the API write on a zone only what zones provide (405 otherwise, store unchanged)', async () => {
    const { store, manager } = setup('zone', { zoneName: 'east' });
    await expect(manager.apply(getKind('Mesh'), { mesh: '', name: 'm' }, body('Mesh', '', 'm', {}), { caller: ADMIN })).rejects.toMatchObject({
      code: 'method_not_allowed',
    });
    expect(await store.count('Mesh')).toBe(0);
    // The control plane's own writes are not API writes.
    await manager.apply(getKind('Mesh'), { mesh: '', name: 'm' }, body('Mesh', '', 'm', {}));
    const created = await manager.apply(getKind('Dataplane'), { mesh: 'm', name: 'web-1' }, body('Dataplane', 'm', 'web-1', DATAPLANE), { caller: ADMIN });
    expect(created.created).toBe(true);
    expect(JSON.parse(created.resource.spec).networking.inbound[0].tags).toEqual({ 'mesh.io/service': 'web', 'mesh.io/zone': 'east' });
    await expect(manager.remove(getKind('Mesh'), { mesh: '', name: 'm' }, { caller: ADMIN })).rejects.toMatchObject({ code: 'method_not_allowed' });
    expect(await stored(store, 'Mesh', '', 'm')).toBeDefined();
  });

  it('lets the API write on a global what the global provides, and refuses dataplanes', async () => {
    const { store, manager } = setup('global');
    await manager.apply(getKind('Mesh'), { mesh: '', name: 'm' }, body('Mesh', '', 'm', {}), { caller: ADMIN });
    await expect(manager.apply(getKind('Dataplane'), { mesh: 'm', name: 'dp' }, body('Dataplane', 'm', 'dp', DATAPLANE), { caller: ADMIN })).rejects.toMatchObject({
      code: 'method_not_allowed',
    });
    await manager.apply(getKind('Zone'), { mesh: '', name: 'east' }, body('Zone', '', 'east', {}), { caller: ADMIN });
    expect(await store.count('Dataplane')).toBe(0);
    expect(await stored(store, 'Zone', '', 'east')).toBeDefined();
  });

  it('refuses every API write on a read-only API, not the control plane own writes', async () => {
    const { store, manager } = setup('standalone', { apiReadOnly: true });
    await expect(manager.apply(getKind('Mesh'), { mesh: '', name: 'm' }, body('Mesh', '', 'm', {}), { caller: ADMIN })).rejects.toMatchObject({ code: 'method_not_allowed' });
    await manager.ensureDefaultMesh();
    expect(await store.count('Mesh')).toBe(1);
  });

  it('stores what the global sends to a zone as sent, labelled with its origin, without local defaults', async () => {
    const { store, manager } = setup('zone', { zoneName: 'east' });
    const result = await applySyncedOne(manager, getKind('Mesh'), { mesh: '', name: 'm' }, 'global', body('Mesh', '', 'm', {}));
    expect(result.resource.labels).toEqual({ 'mesh.io/origin': 'global' });
    expect(await store.count('TrafficPermission', 'm')).toBe(0);
    await applySyncedOne(manager, getKind('TrafficRoute'), { mesh: 'm', name: 'r' }, 'global', body('TrafficRoute', 'm', 'r', ROUTE));
    const updated = await applySyncedOne(manager, getKind('TrafficRoute'), { mesh: 'm', name: 'r' }, 'global', body('TrafficRoute', 'm', 'r', { ...ROUTE, sources: [{ match: { 'mesh.io/service': 'web' } }] }));
    expect(updated).toMatchObject({ created: false, resource: { version: 2, labels: { 'mesh.io/origin': 'global' } } });
    await applySyncedOne(manager, getKind('TrafficRoute'), { mesh: 'm', name: 'r' }, 'global');
    expect(await stored(store, 'TrafficRoute', 'm', 'r')).toBeUndefined();
  });

  it('stores what a zone sends to the global under the zone, labelled with origin and zone', async () => {
    const { store, manager } = setup('global');
    await manager.apply(getKind('Mesh'), { mesh: '', name: 'm' }, body('Mesh', '', 'm', {}));
    await manager.apply(getKind('Zone'), { mesh: '', name: 'east' }, body('Zone', '', 'east', {}));
    const result = await applySyncedOne(manager, getKind('Dataplane'), { mesh: 'm', name: 'east.web-1' }, { zone: 'east' }, body('Dataplane', 'm', 'web-1', DATAPLANE));
    expect(result.resource).toMatchObject({ name: 'east.web-1', labels: { 'mesh.io/origin': 'zone', 'mesh.io/zone': 'east' } });
    await applySyncedOne(manager, getKind('Dataplane'), { mesh: 'm', name: 'east.web-1' }, { zone: 'east' });
    expect(await store.count('Dataplane', 'm')).toBe(0);
  });

  it('refuses a synced write of a kind that does not flow that way, or on the wrong side', async () => {
    const global = setup('global');
    await expect(applySyncedOne(global.manager, getKind('Mesh'), { mesh: '', name: 'm' }, { zone: 'east' }, body('Mesh', '', 'm', {}))).rejects.toMatchObject({
      code: 'bad_request',
      message: 'Mesh is not synced from zone east to a global control plane',
    });
    await expect(applySyncedOne(global.manager, getKind('Mesh'), { mesh: '', name: 'm' }, 'global', body('Mesh', '', 'm', {}))).rejects.toMatchObject({ code: 'bad_request' });
    const zone = setup('zone', { zoneName: 'east' });
    await expect(applySyncedOne(zone.manager, getKind('Zone'), { mesh: '', name: 'west' }, 'global', body('Zone', '', 'west', {}))).rejects.toMatchObject({ code: 'bad_request' });
    expect(await global.store.count('Mesh')).toBe(0);
    expect(await zone.store.count('Zone')).toBe(0);
  });

  it('keeps user labels, replaces the control plane labels a user sends, and checks label syntax', async () => {
    const { manager } = setup('standalone');
    const labels = { team: 'payments', 'mesh.io/origin': 'zone', 'mesh.io/zone': 'fake' };
    const result = await manager.apply(getKind('Mesh'), { mesh: '', name: 'm' }, { ...body('Mesh', '', 'm', {}), labels }, { caller: ADMIN });
    expect(result.resource.labels).toEqual({ team: 'payments' });
    await expect(manager.apply(getKind('Mesh'), { mesh: '', name: 'm' }, { ...body('Mesh', '', 'm', {}), labels: { 'bad key!': 'x', ok: 'not ok!' } })).rejects.toMatchObject({
      code: 'invalid',
      violations: [
        { field: 'labels["bad key!"]', message: expect.stringContaining('label key name') },
        { field: 'labels["ok"]', message: expect.stringContaining('label value') },
      ],
    });
    await expect(manager.apply(getKind('Mesh'), { mesh: '', name: 'm' }, { ...body('Mesh', '', 'm', {}), labels: { team: 7 } })).rejects.toMatchObject({
      code: 'bad_request',
      message: "invalid Mesh object: 'labels.team: expected a string, got number'",
    });
  });

  it('checks access after validation: a non-admin may not write secrets (403, store unchanged)', async () => {
    const { store, manager } = setup('standalone');
    await manager.ensureDefaultMesh();
    const before = await store.count('Secret', 'default');
    await expect(manager.apply(getKind('Secret'), { mesh: 'default', name: 's' }, body('Secret', 'default', 's', { data: 'YQ==' }), { caller: ANONYMOUS })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(manager.remove(getKind('Secret'), { mesh: 'default', name: 's' }, { caller: ANONYMOUS })).rejects.toMatchObject({ code: 'not_found' });
    expect(await store.count('Secret', 'default')).toBe(before);
  });
});
