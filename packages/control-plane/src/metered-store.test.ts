// The timed store: what /metrics shows of store operations, over a real SQLite store.
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { MeteredResourceStore } from './metered-store.js';

let store: MeteredResourceStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

function open() {
  store = new MeteredResourceStore(new SqliteResourceStore({ path: ':memory:' }));
  const registry = new Registry();
  for (const metric of store.metrics) registry.registerMetric(metric);
  return { store, scrape: () => registry.metrics() };
}

const count = (text: string, operation: string, type: string) =>
  Number(new RegExp(`^store_count\\{operation="${operation}",resource_type="${type}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);

describe('MeteredResourceStore', () => {
  it('counts and times each operation by kind, under the reference names', async () => {
    const { store, scrape } = open();
    const created = await store.create({ type: 'Mesh', mesh: '', name: 'demo', spec: '{}' });
    await store.get({ type: 'Mesh', mesh: '', name: 'demo' });
    await store.get({ type: 'Mesh', mesh: '', name: 'missing' });
    await store.getMany([{ type: 'Dataplane', mesh: 'demo', name: 'a' }, { type: 'Dataplane', mesh: 'demo', name: 'b' }]);
    await store.list({ type: 'Dataplane', offset: 0, size: 0 });
    await store.update({ type: 'Mesh', mesh: '', name: 'demo', spec: '{"a":1}', version: created.version });
    await store.delete({ type: 'Mesh', mesh: '', name: 'demo' });
    const text = await scrape();
    expect(text).toContain('# TYPE store histogram');
    expect(count(text, 'create', 'Mesh')).toBe(1);
    expect(count(text, 'get', 'Mesh')).toBe(2);
    // A batch read is one observation.
    expect(count(text, 'get', 'Dataplane')).toBe(1);
    expect(count(text, 'list', 'Dataplane')).toBe(1);
    expect(count(text, 'update', 'Mesh')).toBe(1);
    expect(count(text, 'delete', 'Mesh')).toBe(1);
    expect(text).toMatch(/^store_bucket\{le="\+Inf",operation="get",resource_type="Mesh"\} 2$/m);
  });

  it('counts a failed operation too, and a stale update as a conflict', async () => {
    const { store, scrape } = open();
    const created = await store.create({ type: 'Mesh', mesh: '', name: 'demo', spec: '{}' });
    await store.update({ type: 'Mesh', mesh: '', name: 'demo', spec: '{"a":1}', version: created.version });
    await expect(store.update({ type: 'Mesh', mesh: '', name: 'demo', spec: '{"a":2}', version: created.version })).rejects.toMatchObject({ code: 'conflict' });
    await expect(store.create({ type: 'Mesh', mesh: '', name: 'demo', spec: '{}' })).rejects.toMatchObject({ code: 'already_exists' });
    const text = await scrape();
    expect(count(text, 'update', 'Mesh')).toBe(2);
    expect(count(text, 'create', 'Mesh')).toBe(2);
    expect(text).toMatch(/^store_conflicts\{resource_type="Mesh"\} 1$/m);
  });

  it('labels a batch by its kind, or by none when it writes several', async () => {
    const { store, scrape } = open();
    await store.createMissing([
      { type: 'Mesh', mesh: '', name: 'a', spec: '{}' },
      { type: 'Mesh', mesh: '', name: 'b', spec: '{}' },
    ]);
    await store.writeBatch([
      { operation: 'upsert', resource: { type: 'Mesh', mesh: '', name: 'c', spec: '{}' } },
      { operation: 'delete', key: { type: 'Zone', mesh: '', name: 'z' } },
    ]);
    const text = await scrape();
    expect(count(text, 'create_missing', 'Mesh')).toBe(1);
    expect(count(text, 'write_batch', '')).toBe(1);
    // Everything else passes through untimed.
    expect(await store.currentRevision()).toBeGreaterThan(0);
  });
});
