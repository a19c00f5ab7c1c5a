// Applying a zone sync batch: one transaction, the reference's full and incremental rules, the
// sender's scope, and nothing written twice.
import { getKind, ORIGIN_LABEL, ZONE_LABEL } from '@mesh/model';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { describe, expect, it } from 'vitest';
import { ResourceManager } from './manager.js';
import { syncCursorSetting, type SyncBatch } from './sync.js';

const ALL = [{ match: { 'mesh.io/service': '*' } }];
const route = (service: string) => JSON.stringify({ sources: ALL, destinations: ALL, conf: { destination: { 'mesh.io/service': service } } });
const DATAPLANE = JSON.stringify({ networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web', 'mesh.io/zone': 'east' } }] } });

function zone() {
  const store = new SqliteResourceStore({ path: ':memory:' });
  return { store, manager: new ResourceManager({ store, mode: 'zone', zoneName: 'east' }) };
}

const routes = (batch: Partial<SyncBatch> & Pick<SyncBatch, 'kinds'>): SyncBatch => ({ origin: 'global', full: false, owns: () => true, ...batch });
const names = async (store: SqliteResourceStore, type = 'TrafficRoute') => (await store.list({ type, offset: 0, size: 0 })).items.map((r) => r.name);

describe('applySynced', () => {
  it('applies a full batch as the whole state: creates, updates and deletes in one transaction with the cursor', async () => {
    const { store, manager } = zone();
    const kind = getKind('TrafficRoute');
    await manager.applySynced(routes({ full: true, kinds: [{ kind, resources: [{ mesh: 'm', name: 'a', spec: route('a') }, { mesh: 'm', name: 'b', spec: route('b') }], removed: [] }] }));
    const revision = await store.currentRevision();
    const changes = await manager.applySynced(
      routes({
        full: true,
        kinds: [{ kind, resources: [{ mesh: 'm', name: 'a', spec: route('a') }, { mesh: 'm', name: 'c', spec: route('c'), creationTime: '2025-05-05T05:05:05.000Z' }], removed: [] }],
        settings: { [syncCursorSetting('global')]: '{"store":"g","revision":9}' },
      }),
    );
    // `a` did not change: nothing is written for it.
    expect(changes.map((c) => [c.operation, c.name])).toEqual([
      ['delete', 'b'],
      ['create', 'c'],
    ]);
    expect(changes.map((c) => c.revision)).toEqual([revision + 1, revision + 2]);
    expect(await names(store)).toEqual(['a', 'c']);
    expect(await store.get({ type: 'TrafficRoute', mesh: 'm', name: 'c' })).toMatchObject({ creationTime: '2025-05-05T05:05:05.000Z', labels: { [ORIGIN_LABEL]: 'global' } });
    expect(await store.getSetting(syncCursorSetting('global'))).toBe('{"store":"g","revision":9}');
  });

  it('applies an incremental batch to the names it carries only', async () => {
    const { store, manager } = zone();
    const kind = getKind('TrafficRoute');
    await manager.applySynced(routes({ full: true, kinds: [{ kind, resources: ['a', 'b', 'c'].map((name) => ({ mesh: 'm', name, spec: route(name) })), removed: [] }] }));
    await manager.applySynced(routes({ kinds: [{ kind, resources: [{ mesh: 'm', name: 'b', spec: route('changed') }], removed: [{ mesh: 'm', name: 'c' }, { mesh: 'm', name: 'never-there' }] }] }));
    expect(await names(store)).toEqual(['a', 'b']);
    expect(JSON.parse((await store.get({ type: 'TrafficRoute', mesh: 'm', name: 'b' }))!.spec).conf.destination).toEqual({ 'mesh.io/service': 'changed' });
  });

  it('prunes only what the sender owns', async () => {
    const { store, manager } = zone();
    const kind = getKind('GlobalSecret');
    await manager.apply(kind, { mesh: '', name: 'admin-user-token' }, { type: 'GlobalSecret', name: 'admin-user-token', data: 'eA==' });
    await manager.applySynced(routes({ full: true, owns: (stored) => stored.name.startsWith('zone-'), kinds: [{ kind, resources: [{ mesh: '', name: 'zone-key', spec: '{"data":"eQ=="}' }], removed: [] }] }));
    expect(await names(store, 'GlobalSecret')).toEqual(['admin-user-token', 'zone-key']);
  });

  it('refuses, writing nothing, a copy over a resource another owner holds', async () => {
    const { store, manager } = zone();
    const kind = getKind('GlobalSecret');
    await manager.apply(kind, { mesh: '', name: 'admin-user-token' }, { type: 'GlobalSecret', name: 'admin-user-token', data: 'eA==' });
    const owns = (stored: { name: string }) => stored.name.startsWith('zone-');
    for (const full of [false, true]) {
      const batch = routes({ full, owns, kinds: [{ kind, resources: [{ mesh: '', name: 'zone-key', spec: '{"data":"eQ=="}' }, { mesh: '', name: 'admin-user-token', spec: '{"data":"eg=="}' }], removed: [] }] });
      await expect(manager.applySynced(batch)).rejects.toMatchObject({ code: 'bad_request', message: 'GlobalSecret "admin-user-token" belongs to another owner and cannot be synced over' });
    }
    expect(await names(store, 'GlobalSecret')).toEqual(['admin-user-token']);
    expect(JSON.parse((await store.get({ type: 'GlobalSecret', mesh: '', name: 'admin-user-token' }))!.spec)).toEqual({ data: 'eA==' });
  });

  it('refuses, writing nothing, a batch of a kind that does not flow that way or a spec that does not decode', async () => {
    const { store, manager } = zone();
    await expect(manager.applySynced(routes({ kinds: [{ kind: getKind('Dataplane'), resources: [{ mesh: 'm', name: 'x', spec: DATAPLANE }], removed: [] }] }))).rejects.toMatchObject({ code: 'bad_request' });
    const broken = routes({
      kinds: [{ kind: getKind('TrafficRoute'), resources: [{ mesh: 'm', name: 'ok', spec: route('ok') }, { mesh: 'm', name: 'bad', spec: '{"sources": 7}' }], removed: [] }],
      settings: { [syncCursorSetting('global')]: 'moved' },
    });
    await expect(manager.applySynced(broken)).rejects.toMatchObject({ code: 'bad_request' });
    expect(await store.count('TrafficRoute')).toBe(0);
    expect(await store.getSetting(syncCursorSetting('global'))).toBeUndefined();
  });

  it('stores a zone’s copies on the global only while its Zone exists, labelled with the zone', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    const manager = new ResourceManager({ store, mode: 'global' });
    const batch: SyncBatch = { origin: { zone: 'east' }, full: false, owns: () => true, kinds: [{ kind: getKind('Dataplane'), resources: [{ mesh: 'm', name: 'east.web', spec: DATAPLANE }], removed: [] }] };
    await expect(manager.applySynced(batch)).rejects.toMatchObject({ code: 'bad_request', message: 'Zone "east" not found' });
    await manager.apply(getKind('Zone'), { mesh: '', name: 'east' }, { type: 'Zone', name: 'east' });
    await manager.applySynced(batch);
    expect((await store.get({ type: 'Dataplane', mesh: 'm', name: 'east.web' }))?.labels).toEqual({ [ORIGIN_LABEL]: 'zone', [ZONE_LABEL]: 'east' });
  });
});
