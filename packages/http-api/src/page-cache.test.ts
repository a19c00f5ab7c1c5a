import { describe, expect, it } from 'vitest';
import { AssembledPages, joinItems, ListPageCache } from './page-cache.js';
import { startApi, openTestStore } from './testing.js';

describe('ListPageCache', () => {
  it('serves a page again until its type changes, whatever else changes', async () => {
    const store = await openTestStore();
    const cache = new ListPageCache(store);
    let loads = 0;
    const load = () => Promise.resolve({ items: [`{"n":${++loads}}`], listed: { start: 0, total: 1, last: { mesh: 'm', name: 'r' } } });

    expect((await cache.page('TrafficRoute', 'm/0/100', load)).items.toString()).toBe('{"n":1}');
    expect((await cache.page('TrafficRoute', 'm/0/100', load)).items.toString()).toBe('{"n":1}');
    await store.create({ type: 'Timeout', mesh: 'm', name: 't', spec: '{}' });
    expect((await cache.page('TrafficRoute', 'm/0/100', load)).items.toString()).toBe('{"n":1}');
    await store.create({ type: 'TrafficRoute', mesh: 'm', name: 'r', spec: '{}' });
    expect((await cache.page('TrafficRoute', 'm/0/100', load)).items.toString()).toBe('{"n":2}');
  });

  it('does not keep a page whose type changed while it was loading', async () => {
    const store = await openTestStore();
    const cache = new ListPageCache(store);
    let loads = 0;
    const racing = async () => {
      loads++;
      await store.create({ type: 'TrafficRoute', mesh: 'm', name: `r${loads}`, spec: '{}' });
      return { items: [`{"n":${loads}}`], listed: { start: 0, total: loads, last: { mesh: 'm', name: `r${loads}` } } };
    };
    await cache.page('TrafficRoute', 'k', racing);
    expect((await cache.page('TrafficRoute', 'k', racing)).listed.total).toBe(2);
  });
});

describe('AssembledPages', () => {
  it('serves a page again while it meets the very same objects, and rebuilds it when any differs', () => {
    const pages = new AssembledPages();
    let builds = 0;
    const build = () => Buffer.from(String(++builds));
    const a = { name: 'a' };
    const b = { name: 'b' };
    expect(pages.items('/p', [a, b], build).toString()).toBe('1');
    expect(pages.items('/p', [a, b], build).toString()).toBe('1');
    // Equal but not the same object, one missing, another key: rebuilt.
    expect(pages.items('/p', [a, { name: 'b' }], build).toString()).toBe('2');
    expect(pages.items('/p', [a], build).toString()).toBe('3');
    expect(pages.items('/q', [a], build).toString()).toBe('4');
    expect(pages.items('/p', [a], build).toString()).toBe('3');
  });

  it('joins encoded items with commas', () => {
    expect(joinItems([Buffer.from('{"a":1}'), Buffer.from('{"b":2}')]).toString()).toBe('{"a":1},{"b":2}');
    expect(joinItems([]).length).toBe(0);
  });
});

describe('GET on a list, through the cache', () => {
  it('shows every write at once', async () => {
    const api = await startApi();
    try {
      const before = await api.get('/meshes/default/traffic-routes');
      const route = { type: 'TrafficRoute', mesh: 'default', name: 'r', sources: [{ match: { 'mesh.io/service': '*' } }], destinations: [{ match: { 'mesh.io/service': '*' } }], conf: { destination: { 'mesh.io/service': '*' } } };
      expect((await api.put('/meshes/default/traffic-routes/r', route)).status).toBe(201);
      const after = await api.get('/meshes/default/traffic-routes');
      expect((after.body as { total: number }).total).toBe((before.body as { total: number }).total + 1);
      expect(after.headers.get('content-length')).toBe(String(Buffer.byteLength(after.text)));
      expect((await api.del('/meshes/default/traffic-routes/r')).status).toBe(200);
      expect(await api.get('/meshes/default/traffic-routes')).toMatchObject({ text: before.text });
    } finally {
      await api.close();
    }
  });
});
