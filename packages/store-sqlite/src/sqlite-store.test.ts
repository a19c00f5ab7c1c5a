import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteResourceStore } from './sqlite-store.js';
import type { ResourceChange } from '@mesh/store';
import { describeResourceStore } from '@mesh/store/testing';

const dirs: string[] = [];
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-store-'));
  dirs.push(dir);
  return join(dir, 'mesh.db');
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const route = (mesh: string, name: string, spec = '{}') => ({ type: 'TrafficRoute', mesh, name, spec });

describe('SqliteResourceStore', () => {
  it('creates, reads, updates with a version and deletes', async () => {
    let clock = new Date('2026-01-01T00:00:00.000Z');
    const store = new SqliteResourceStore({ path: ':memory:', now: () => clock });
    const created = await store.create(route('default', 'r1', '{"a":1}'));
    expect(created).toMatchObject({ version: 1, creationTime: '2026-01-01T00:00:00.000Z', modificationTime: '2026-01-01T00:00:00.000Z' });

    clock = new Date('2026-01-01T00:00:05.500Z');
    const updated = await store.update({ ...route('default', 'r1', '{"a":2}'), version: 1 });
    expect(updated).toMatchObject({ spec: '{"a":2}', version: 2, creationTime: '2026-01-01T00:00:00.000Z', modificationTime: '2026-01-01T00:00:05.500Z' });
    expect(await store.get({ type: 'TrafficRoute', mesh: 'default', name: 'r1' })).toEqual(updated);

    await store.delete({ type: 'TrafficRoute', mesh: 'default', name: 'r1' });
    expect(await store.get({ type: 'TrafficRoute', mesh: 'default', name: 'r1' })).toBeUndefined();
    await store.close();
  });

  it('refuses a duplicate create and a missing delete or update', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    await store.create(route('default', 'r1'));
    await expect(store.create(route('default', 'r1'))).rejects.toMatchObject({
      code: 'already_exists',
      message: 'resource already exists: type="TrafficRoute" name="r1" mesh="default"',
    });
    await expect(store.delete({ type: 'TrafficRoute', mesh: 'default', name: 'nope' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(store.update({ ...route('default', 'nope'), version: 1 })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('detects a concurrent update by version', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    await store.create(route('default', 'r1'));
    const [a, b] = await Promise.allSettled([
      store.update({ ...route('default', 'r1', '{"by":"a"}'), version: 1 }),
      store.update({ ...route('default', 'r1', '{"by":"b"}'), version: 1 }),
    ]);
    expect(a.status).toBe('fulfilled');
    expect(b).toMatchObject({ status: 'rejected', reason: { code: 'conflict', message: 'resource conflict: type="TrafficRoute" name="r1" mesh="default"' } });
    expect((await store.get({ type: 'TrafficRoute', mesh: 'default', name: 'r1' }))?.spec).toBe('{"by":"a"}');
  });

  it('pages through every item exactly once in (mesh, name) order', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    const names: string[] = [];
    for (let i = 0; i < 237; i++) names.push(`r-${String(i).padStart(3, '0')}`);
    await store.createMissing([...names].reverse().map((n) => route('m1', n)));
    await store.createMissing([route('m0', 'z'), route('m2', 'a')]);

    const seen: string[] = [];
    for (let offset = 0; ; offset += 50) {
      const page = await store.list({ type: 'TrafficRoute', mesh: 'm1', offset, size: 50 });
      expect(page.total).toBe(237);
      if (page.items.length === 0) break;
      seen.push(...page.items.map((r) => r.name));
    }
    expect(seen).toEqual(names);

    const all = await store.list({ type: 'TrafficRoute', offset: 0, size: 0 });
    expect(all.total).toBe(239);
    expect(all.items[0]).toMatchObject({ mesh: 'm0', name: 'z' });
    expect(all.items.at(-1)).toMatchObject({ mesh: 'm2', name: 'a' });
    expect(await store.count('TrafficRoute', 'm1')).toBe(237);
  });

  it('filters by name substring before paging', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    await store.createMissing(['web-1', 'web-2', 'api-1', 'web-3'].map((n) => route('default', n, JSON.stringify({ n }))));
    const page = await store.list({ type: 'TrafficRoute', mesh: 'default', nameContains: 'web', offset: 2, size: 1 });
    expect(page).toMatchObject({ total: 3, items: [{ name: 'web-3' }] });
  });

  it('deletes a mesh with everything it owns and announces each deletion', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    await store.create({ type: 'Mesh', mesh: '', name: 'm1', spec: '{}' });
    await store.create({ type: 'Mesh', mesh: '', name: 'm2', spec: '{}' });
    await store.createMissing([route('m1', 'a'), { type: 'Secret', mesh: 'm1', name: 's', spec: '{}' }, route('m2', 'b')]);
    const changes: ResourceChange[] = [];
    store.onChange((c) => changes.push(c));

    await store.deleteMesh('m1');
    expect(await store.count('TrafficRoute')).toBe(1);
    expect(await store.count('Secret')).toBe(0);
    expect(await store.count('Mesh')).toBe(1);
    expect(changes.map((c) => `${c.operation} ${c.type} ${c.mesh}/${c.name}`).sort()).toEqual([
      'delete Mesh /m1',
      'delete Secret m1/s',
      'delete TrafficRoute m1/a',
    ]);
    await expect(store.deleteMesh('m1')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('keeps its data when the file is reopened', async () => {
    const path = tempFile();
    const first = new SqliteResourceStore({ path });
    await first.create(route('default', 'kept', '{"x":1}'));
    await first.putSetting('clusterId', 'abc');
    await first.close();

    const second = new SqliteResourceStore({ path });
    expect(await second.get({ type: 'TrafficRoute', mesh: 'default', name: 'kept' })).toMatchObject({ spec: '{"x":1}', version: 1 });
    expect(await second.list({ type: 'TrafficRoute', offset: 0, size: 10 })).toMatchObject({ total: 1 });
    expect(await second.getSetting('clusterId')).toBe('abc');
    await second.close();
  });

  it('announces creates, updates and deletes', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    const changes: ResourceChange[] = [];
    const stop = store.onChange((c) => changes.push(c));
    await store.create(route('default', 'a'));
    await store.update({ ...route('default', 'a'), version: 1 });
    await store.delete({ type: 'TrafficRoute', mesh: 'default', name: 'a' });
    stop();
    await store.create(route('default', 'b'));
    expect(changes.map((c) => c.operation)).toEqual(['create', 'update', 'delete']);
  });
});

describeResourceStore({ describe, it, expect }, 'SqliteResourceStore', async (options = {}) => {
  const path = tempFile();
  return { store: new SqliteResourceStore({ path, ...options }), reopen: async () => new SqliteResourceStore({ path }) };
});
