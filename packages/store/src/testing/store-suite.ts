// The behaviour every ResourceStore implementation must have, as one vitest suite that each
// implementation runs against its real database.
import type * as vitest from 'vitest';
import type { ListQuery, ResourceChange, ResourceStore } from '../store.js';

/**
 * The test functions of the calling test file: this module is loaded from its built output,
 * outside the test runner's module graph, so it must not import them itself.
 */
export type TestFunctions = Pick<typeof vitest, 'describe' | 'it' | 'expect'>;

export interface TestStoreOptions {
  now?: () => Date;
  /** Change-log rows kept. */
  retainedChanges?: number;
}

/** Opens a store on a new, empty database; `reopen` opens another store on the same database. */
export type OpenTestStore = (options?: TestStoreOptions) => Promise<{ store: ResourceStore; reopen: () => Promise<ResourceStore> }>;

const route = (mesh: string, name: string, spec = '{}') => ({ type: 'TrafficRoute', mesh, name, spec });
const key = (mesh: string, name: string) => ({ type: 'TrafficRoute', mesh, name });
const dataplane = (name: string, tags: Record<string, string>, gateway?: 'BUILTIN' | 'DELEGATED') => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  spec: JSON.stringify({
    networking: gateway ? { address: '10.0.0.1', gateway: { tags, type: gateway } } : { address: '10.0.0.1', inbound: [{ port: 80, tags }] },
  }),
});

export function describeResourceStore({ describe, it, expect }: TestFunctions, name: string, open: OpenTestStore): void {
  describe(`${name}: the ResourceStore contract`, () => {
    it('creates, reads, updates with optimistic concurrency and deletes, with timestamps and labels', async () => {
      let clock = new Date('2026-01-01T00:00:00.000Z');
      const { store } = await open({ now: () => clock });
      const created = await store.create({ ...route('default', 'r1', '{"a":1}'), labels: { team: 'x' } });
      expect(created).toMatchObject({ version: 1, labels: { team: 'x' }, creationTime: '2026-01-01T00:00:00.000Z', modificationTime: '2026-01-01T00:00:00.000Z' });
      clock = new Date('2026-01-01T00:00:05.500Z');
      const updated = await store.update({ ...route('default', 'r1', '{"a":2}'), version: 1 });
      expect(updated).toMatchObject({ spec: '{"a":2}', version: 2, labels: {}, creationTime: '2026-01-01T00:00:00.000Z', modificationTime: '2026-01-01T00:00:05.500Z' });
      expect(await store.get(key('default', 'r1'))).toEqual(updated);
      expect(await store.getMany([key('default', 'nope'), key('default', 'r1'), { type: 'Timeout', mesh: 'default', name: 'r1' }])).toEqual([undefined, updated, undefined]);
      await expect(store.create(route('default', 'r1'))).rejects.toMatchObject({ code: 'already_exists' });
      await expect(store.update({ ...route('default', 'r1'), version: 1 })).rejects.toMatchObject({ code: 'conflict' });
      await expect(store.update({ ...route('default', 'nope'), version: 1 })).rejects.toMatchObject({ code: 'not_found' });
      await store.delete(key('default', 'r1'));
      await expect(store.delete(key('default', 'r1'))).rejects.toMatchObject({ code: 'not_found' });
      expect(await store.get(key('default', 'r1'))).toBeUndefined();
      await store.close();
    });

    it('lists in (mesh, name) order with paging, totals and counts', async () => {
      const { store } = await open();
      for (const [mesh, name] of [['b', 'x'], ['a', 'z'], ['a', 'y'], ['b', 'w']] as const) await store.create(route(mesh, name));
      const all = await store.list({ type: 'TrafficRoute', offset: 0, size: 0 });
      expect(all.items.map((r) => `${r.mesh}/${r.name}`)).toEqual(['a/y', 'a/z', 'b/w', 'b/x']);
      const page = await store.list({ type: 'TrafficRoute', offset: 1, size: 2 });
      expect([page.total, page.items.map((r) => r.name)]).toEqual([4, ['z', 'w']]);
      expect((await store.list({ type: 'TrafficRoute', mesh: 'b', offset: 0, size: 1 })).items.map((r) => r.name)).toEqual(['w']);
      expect([await store.count('TrafficRoute'), await store.count('TrafficRoute', 'a'), await store.count('Timeout')]).toEqual([4, 2, 0]);
      await store.close();
    });

    it('creates and updates a resource with what it owns in one transaction, owned ones that exist skipped', async () => {
      const { store } = await open();
      const seen: ResourceChange[] = [];
      store.onChange((change) => seen.push(change));
      await store.create(route('m', 'kept', '{"kept":true}'));
      await store.create({ type: 'Mesh', mesh: '', name: 'm', spec: '{}' }, [route('m', 'a'), route('m', 'kept')]);
      expect(seen.map((c) => [c.revision, c.operation, c.type, c.name])).toEqual([
        [1, 'create', 'TrafficRoute', 'kept'],
        [2, 'create', 'Mesh', 'm'],
        [3, 'create', 'TrafficRoute', 'a'],
      ]);
      expect((await store.get(key('m', 'kept')))!.spec).toBe('{"kept":true}');
      // Refused as a whole: the resource exists (a create) or moved on (an update).
      await expect(store.create({ type: 'Mesh', mesh: '', name: 'm', spec: '{}' }, [route('m', 'b')])).rejects.toMatchObject({ code: 'already_exists' });
      await expect(store.update({ type: 'Mesh', mesh: '', name: 'm', spec: '{"x":1}', version: 7 }, [route('m', 'c')])).rejects.toMatchObject({ code: 'conflict' });
      expect([await store.get(key('m', 'b')), await store.get(key('m', 'c')), await store.currentRevision()]).toEqual([undefined, undefined, 3]);
      await store.update({ type: 'Mesh', mesh: '', name: 'm', spec: '{"x":1}', version: 1 }, [route('m', 'd')]);
      expect(seen.slice(3).map((c) => [c.revision, c.operation, c.type, c.name])).toEqual([
        [4, 'create', 'TrafficRoute', 'd'],
        [5, 'update', 'Mesh', 'm'],
      ]);
      await store.close();
    });

    it('tells each change with the resource it left, none after a delete', async () => {
      const { store } = await open();
      const seen: Array<[number, string | undefined]> = [];
      store.onChange((change, resource) => seen.push([change.revision, resource?.spec]));
      await store.create(route('m', 'a', '{"v":1}'));
      await store.update({ ...key('m', 'a'), spec: '{"v":2}', version: 1 });
      await store.delete(key('m', 'a'));
      expect(seen).toEqual([
        [1, '{"v":1}'],
        [2, '{"v":2}'],
        [3, undefined],
      ]);
      await store.close();
    });

    it('resumes a list after a key, present or gone, with where its page starts', async () => {
      const { store } = await open();
      for (const [mesh, name] of [['a', 'y'], ['a', 'z'], ['b', 'w'], ['b', 'x']] as const) await store.create(route(mesh, name));
      const page = async (query: Omit<ListQuery, 'type'>) => {
        const found = await store.list({ type: 'TrafficRoute', ...query });
        return [found.start, found.total, found.items.map((r) => `${r.mesh}/${r.name}`)];
      };
      expect(await page({ offset: 1, size: 2 })).toEqual([1, 4, ['a/z', 'b/w']]);
      expect(await page({ after: { mesh: 'a', name: 'z' }, offset: 0, size: 2 })).toEqual([2, 4, ['b/w', 'b/x']]);
      // A key that is gone (or never was) resumes where it would sort.
      expect(await page({ after: { mesh: 'a', name: 'yy' }, offset: 0, size: 0 })).toEqual([1, 4, ['a/z', 'b/w', 'b/x']]);
      expect(await page({ after: { mesh: 'b', name: 'x' }, offset: 0, size: 2 })).toEqual([4, 4, []]);
      expect(await page({ mesh: 'b', after: { mesh: 'a', name: 'z' }, offset: 0, size: 1 })).toEqual([0, 2, ['b/w']]);
      expect(await page({ nameContains: 'z', after: { mesh: 'a', name: 'y' }, offset: 0, size: 1 })).toEqual([0, 1, ['a/z']]);
      expect(await page({ nameContains: 'w', after: { mesh: 'a', name: 'z' }, offset: 0, size: 1 })).toEqual([0, 1, ['b/w']]);
      expect(await page({ nameContains: 'x', after: { mesh: 'b', name: 'x' }, offset: 0, size: 1 })).toEqual([1, 1, []]);
      await store.close();
    });

    it('keeps (mesh, name) in code-unit order, written and read again, whatever order the database sorts text in', async () => {
      const { store, reopen } = await open();
      for (const name of ['ab', 'a_b', 'B', 'a.b', 'a-c', 'a']) await store.create(route('m', name));
      await store.create(route('M', 'z'));
      const listed = async (from: ResourceStore, query: Omit<ListQuery, 'type'> = { offset: 0, size: 0 }) =>
        (await from.list({ type: 'TrafficRoute', ...query })).items.map((r) => `${r.mesh}/${r.name}`);
      const ordered = ['M/z', 'm/B', 'm/a', 'm/a-c', 'm/a.b', 'm/a_b', 'm/ab'];
      expect(await listed(store)).toEqual(ordered);
      await store.close();

      const again = await reopen();
      expect(await listed(again)).toEqual(ordered);
      await again.create(route('m', 'a-b'));
      expect(await listed(again, { mesh: 'm', after: { mesh: 'm', name: 'a' }, offset: 0, size: 2 })).toEqual(['m/a-b', 'm/a-c']);
      expect(await listed(again, { offset: 5, size: 2 })).toEqual(['m/a.b', 'm/a_b']);
      await again.close();
    });

    it('filters lists by name, tags and gateway, as data', async () => {
      const { store } = await open();
      await store.create(dataplane('web-1', { 'mesh.io/service': 'web', version: 'v1' }));
      await store.create(dataplane('web-2', { 'mesh.io/service': 'web', version: 'v2' }));
      await store.create(dataplane('edge', { 'mesh.io/service': 'edge' }, 'BUILTIN'));
      const names = async (filter: object) => (await store.list({ type: 'Dataplane', offset: 0, size: 0, ...filter })).items.map((r) => r.name);
      expect(await names({ nameContains: 'web' })).toEqual(['web-1', 'web-2']);
      expect(await names({ tags: { 'mesh.io/service': 'web', version: '2' } })).toEqual(['web-2']);
      expect(await names({ tags: { version: '*' } })).toEqual(['web-1', 'web-2']);
      expect(await names({ tags: { constructor: '*' } })).toEqual([]);
      expect(await names({ gateway: 'any' })).toEqual(['edge']);
      expect(await names({ gateway: 'none' })).toEqual(['web-1', 'web-2']);
      expect(await names({ gateway: 'delegated' })).toEqual([]);
      const page = await store.list({ type: 'Dataplane', offset: 1, size: 1, nameContains: 'web' });
      expect([page.total, page.items.map((r) => r.name)]).toEqual([2, ['web-2']]);
      await store.close();
    });

    it('numbers every committed change with the next revision, announced in order, kept across a reopen', async () => {
      const { store, reopen } = await open();
      const seen: ResourceChange[] = [];
      store.onChange((change) => seen.push(change));
      await store.create(route('default', 'a'));
      await store.createMissing([route('default', 'b'), route('default', 'a'), route('default', 'c')]);
      await store.update({ ...route('default', 'a', '{"x":1}'), version: 1 });
      await expect(store.create(route('default', 'b'))).rejects.toMatchObject({ code: 'already_exists' });
      await store.create({ type: 'Mesh', mesh: '', name: 'default', spec: '{}' });
      await store.deleteMesh('default');
      expect(seen.map((c) => [c.revision, c.operation, c.type, c.name])).toEqual([
        [1, 'create', 'TrafficRoute', 'a'],
        [2, 'create', 'TrafficRoute', 'b'],
        [3, 'create', 'TrafficRoute', 'c'],
        [4, 'update', 'TrafficRoute', 'a'],
        [5, 'create', 'Mesh', 'default'],
        [6, 'delete', 'Mesh', 'default'],
        [7, 'delete', 'TrafficRoute', 'a'],
        [8, 'delete', 'TrafficRoute', 'b'],
        [9, 'delete', 'TrafficRoute', 'c'],
      ]);
      expect(await store.currentRevision()).toBe(9);
      await store.close();

      const again = await reopen();
      expect(await again.currentRevision()).toBe(9);
      const since = await again.changesSince(6);
      expect(since).toEqual({ resync: false, revision: 9, changes: seen.slice(6) });
      expect(await again.changesSince(9)).toEqual({ resync: false, revision: 9, changes: [] });
      expect(await again.changesSince(0, 2)).toMatchObject({ resync: false, revision: 2 });
      await again.create(route('default', 'd'));
      expect(await again.currentRevision()).toBe(10);
      await again.close();
    });

    it('writes a batch in one transaction: all or nothing, one change per effective write', async () => {
      const { store } = await open();
      const created = await store.create({ ...route('default', 'a'), labels: { keep: 'no' } });
      const seen: number[] = [];
      store.onChange((change) => seen.push(change.revision));
      const changes = await store.writeBatch([
        { operation: 'upsert', resource: { ...route('default', 'a', '{"y":2}'), labels: { from: 'zone' } } },
        { operation: 'upsert', resource: route('default', 'b') },
        { operation: 'delete', key: key('default', 'missing') },
        { operation: 'delete', key: key('default', 'b') },
      ]);
      expect(changes.map((c) => [c.revision, c.operation, c.name])).toEqual([
        [2, 'update', 'a'],
        [3, 'create', 'b'],
        [4, 'delete', 'b'],
      ]);
      expect(seen).toEqual([2, 3, 4]);
      expect(await store.get(key('default', 'a'))).toMatchObject({ spec: '{"y":2}', version: 2, labels: { from: 'zone' }, creationTime: created.creationTime });
      const broken = { ...route('default', 'd'), spec: null as unknown as string };
      await expect(store.writeBatch([{ operation: 'upsert', resource: route('default', 'c') }, { operation: 'upsert', resource: broken }])).rejects.toThrow();
      expect(await store.get(key('default', 'c'))).toBeUndefined();
      expect(seen).toEqual([2, 3, 4]);
      // Nothing was numbered for the refused batch: the next change is the next revision.
      await store.create(route('default', 'e'));
      expect(await store.changesSince(4)).toMatchObject({ resync: false, changes: [{ revision: 5, name: 'e' }] });
      await store.close();
    });

    it('writes settings with a batch, in its transaction, and keeps a given creation time', async () => {
      const { store } = await open({ now: () => new Date('2026-03-01T00:00:00.000Z') });
      await store.putSetting('cursor.old', 'x');
      await store.writeBatch([{ operation: 'upsert', resource: { ...route('default', 'a'), creationTime: '2025-01-01T10:00:00.000Z' } }], {
        settings: { cursor: '7', 'cursor.old': null },
      });
      expect(await store.get(key('default', 'a'))).toMatchObject({ creationTime: '2025-01-01T10:00:00.000Z', modificationTime: '2026-03-01T00:00:00.000Z' });
      expect([await store.getSetting('cursor'), await store.getSetting('cursor.old')]).toEqual(['7', undefined]);
      const broken = { ...route('default', 'b'), spec: null as unknown as string };
      await expect(store.writeBatch([{ operation: 'upsert', resource: broken }], { settings: { cursor: '8' } })).rejects.toThrow();
      expect(await store.getSetting('cursor')).toBe('7');
      await store.close();
    });

    it('commits writes asked together in one transaction, each with its own checks and result', async () => {
      let second = 0;
      const { store, reopen } = await open({ now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, second++)) });
      await store.create(route('default', 'taken'));
      await store.create(route('default', 'again', '{"first":true}'));
      await store.create({ type: 'Mesh', mesh: '', name: 'm', spec: '{}' });
      const seen: ResourceChange[] = [];
      store.onChange((change) => seen.push(change));
      const asked = [
        store.create(route('default', 'a')),
        store.create(route('default', 'taken')),
        // Writes what it owns, then finds the mesh moved on: none of it may stay.
        store.update({ type: 'Mesh', mesh: '', name: 'm', spec: '{"x":1}', version: 7 }, [route('m', 'owned')]),
        store.update({ ...route('default', 'taken', '{"b":2}'), version: 1 }),
        // Read the same version as the one before: that one moved it on.
        store.update({ ...route('default', 'taken', '{"b":3}'), version: 1 }),
        store.delete(key('default', 'missing')),
        // Deleted and created again in the same transaction: the update sees the new one.
        store.delete(key('default', 'again')),
        store.create(route('default', 'again', '{"second":true}')),
        store.update({ ...route('default', 'again', '{"third":true}'), version: 1 }),
        store.create(route('default', 'b')),
      ];
      const results = await Promise.allSettled(asked);
      expect(results.map((result) => (result.status === 'fulfilled' ? 'ok' : (result.reason as { code: string }).code))).toEqual([
        'ok',
        'already_exists',
        'conflict',
        'ok',
        'conflict',
        'not_found',
        'ok',
        'ok',
        'ok',
        'ok',
      ]);
      const stored = results.flatMap((result) => (result.status === 'fulfilled' && result.value ? [result.value] : []));
      // One transaction: one time for all of them.
      expect(new Set(stored.map((resource) => resource.modificationTime))).toEqual(new Set([stored[0]!.modificationTime]));
      const recreated = await store.get(key('default', 'again'));
      expect(recreated).toMatchObject({ spec: '{"third":true}', version: 2, creationTime: stored[0]!.modificationTime });
      expect(stored.at(-2)).toEqual(recreated);
      expect(seen.map((c) => [c.revision, c.operation, c.name])).toEqual([
        [4, 'create', 'a'],
        [5, 'update', 'taken'],
        [6, 'delete', 'again'],
        [7, 'create', 'again'],
        [8, 'update', 'again'],
        [9, 'create', 'b'],
      ]);
      expect(await store.changesSince(3)).toEqual({ resync: false, changes: seen, revision: 9 });
      await store.close();
      const again = await reopen();
      expect(await again.get(key('m', 'owned'))).toBeUndefined();
      expect((await again.get({ type: 'Mesh', mesh: '', name: 'm' }))!.spec).toBe('{}');
      expect((await again.get(key('default', 'taken')))!.spec).toBe('{"b":2}');
      expect(await again.get(key('default', 'again'))).toEqual(recreated);
      expect((await again.list({ type: 'TrafficRoute', offset: 0, size: 0 })).items.map((r) => r.name)).toEqual(['a', 'again', 'b', 'taken']);
      expect(await again.currentRevision()).toBe(9);
      await again.close();
    });

    it('tells a consumer from before the kept change log to read everything again', async () => {
      const { store } = await open({ retainedChanges: 10 });
      await store.createMissing(Array.from({ length: 1020 }, (_, i) => route('default', `r-${String(i).padStart(4, '0')}`)));
      await store.create(route('default', 'last'));
      expect(await store.changesSince(0)).toEqual({ resync: true, revision: 1021 });
      expect(await store.changesSince(1020)).toMatchObject({ resync: false, changes: [{ revision: 1021, name: 'last' }] });
      await store.close();
    });

    it('keeps settings', async () => {
      const { store, reopen } = await open();
      expect(await store.getSetting('clusterId')).toBeUndefined();
      await store.putSetting('clusterId', 'one');
      await store.putSetting('clusterId', 'two');
      await store.close();
      const again = await reopen();
      expect(await again.getSetting('clusterId')).toBe('two');
      await again.close();
    });
  });
}
