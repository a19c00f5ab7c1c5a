// Every write goes through the resource manager: what it hands out, its reader, reads and has no
// write. The lines marked `@ts-expect-error` are the check: the package's type check (`tsc -p`,
// which covers this file) fails if any of them type-checks, that is, if a write could bypass
// the manager.
import { getKind } from '@mesh/model';
import type { ResourceReader } from '@mesh/store';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { describe, expect, it } from 'vitest';
import { ResourceManager } from './manager.js';

const route = { type: 'TrafficRoute', mesh: 'default', name: 'r', spec: '{}' };

describe('the reader the manager hands out', () => {
  it('reads what the manager writes, settings included', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    const manager = new ResourceManager({ store, mode: 'standalone' });
    const reader: ResourceReader = manager.reader;
    const seen: string[] = [];
    reader.onChange((change) => seen.push(`${change.operation} ${change.type} ${change.name}`));
    await manager.ensureDefaultMesh();
    await manager.putSetting('clusterId', 'one');
    expect(await reader.get({ type: 'Mesh', mesh: '', name: 'default' })).toMatchObject({ name: 'default', version: 1 });
    expect(await reader.getSetting('clusterId')).toBe('one');
    expect(seen[0]).toBe('create Mesh default');
    expect(await reader.currentRevision()).toBe(seen.length);
    await store.close();
  });

  it('has no write: writing through it does not type-check', () => {
    const manager = new ResourceManager({ store: new SqliteResourceStore({ path: ':memory:' }), mode: 'standalone' });
    const reader = manager.reader;
    // Never called: each is here to be refused by the type check.
    const bypasses = [
      // @ts-expect-error a reader cannot create
      () => reader.create(route),
      // @ts-expect-error a reader cannot update
      () => reader.update({ ...route, version: 1 }),
      // @ts-expect-error a reader cannot delete
      () => reader.delete(route),
      // @ts-expect-error a reader cannot create in bulk
      () => reader.createMissing([route]),
      // @ts-expect-error a reader cannot delete a mesh
      () => reader.deleteMesh('default'),
      // @ts-expect-error a reader cannot write a batch
      () => manager.reader.writeBatch([{ operation: 'upsert', resource: route }]),
      // @ts-expect-error a reader cannot write a setting: the manager's putSetting does
      () => reader.putSetting('clusterId', 'x'),
      // @ts-expect-error a reader cannot close the store it reads
      () => reader.close(),
      // @ts-expect-error the manager hands out no writable store
      () => manager.store,
      // @ts-expect-error a synced copy has one path, applySynced, with its one validation
      () => manager.apply(getKind('Mesh'), { mesh: '', name: 'm' }, { type: 'Mesh', name: 'm' }, { origin: 'global' }),
    ];
    expect(bypasses).toHaveLength(10);
  });
});
