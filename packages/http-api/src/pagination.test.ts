// Lists: the envelope, paging, the `next` URL and the filters (docs/api.md, Lists).
import { getKind } from '@mesh/model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataplane, emptyMesh, expectJson, externalService, startApi, stdError, trafficRoute, type TestApi } from './testing.js';

const LIST = 'Could not retrieve resources';
const names = (body: { items: Array<{ name: string }> }) => body.items.map((item) => item.name);
const meshNames = (body: { items: Array<{ mesh: string; name: string }> }) => body.items.map((item) => `${item.mesh}/${item.name}`);
/** The `offset` a `next` URL carries: a cursor naming the last item of the page before. */
const after = (mesh: string, name: string) => `~${Buffer.from(`${mesh}\u0000${name}`).toString('base64url')}`;

let api: TestApi;

describe('paging', () => {
  const ROUTES = ['tr-01', 'tr-02', 'tr-03', 'tr-04', 'tr-05', 'tr-06', 'tr-07'];

  beforeAll(async () => {
    api = await startApi({ defaultMesh: false });
    await api.put('/meshes/paging', emptyMesh('paging'));
    await api.put('/meshes/big', emptyMesh('big'));
    // Written in reverse, so only sorting puts them in order.
    for (const name of [...ROUTES].reverse()) await api.put(`/meshes/paging/traffic-routes/${name}`, trafficRoute(name, 'paging'));
    const permission = getKind('TrafficPermission');
    const all = [{ match: { 'mesh.io/service': '*' } }];
    for (let i = 0; i < 105; i++) {
      const name = `tp-${String(i).padStart(3, '0')}`;
      await api.manager.apply(permission, { mesh: 'big', name }, { type: permission.name, mesh: 'big', name, sources: all, destinations: all });
    }
  });
  afterAll(async () => {
    await api.close();
  });

  it('answers with total, items and next, in that order', async () => {
    const reply = await api.get('/meshes/paging/traffic-routes?size=2');
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body)).toEqual(['total', 'items', 'next']);
  });

  it('serves 100 items per page by default', async () => {
    const { body } = await api.get('/meshes/big/traffic-permissions');
    expect(body.total).toBe(105);
    expect(body.items).toHaveLength(100);
    expect(body.next).toBe(`${api.url}/meshes/big/traffic-permissions?offset=${after('big', 'tp-099')}`);
  });

  it('serves every item, with no next page, for size=0', async () => {
    const { body } = await api.get('/meshes/big/traffic-permissions?size=0');
    expect([body.total, body.items.length, body.next]).toEqual([105, 105, null]);
  });

  it('sorts items by name whatever the order they were written in', async () => {
    expect(names((await api.get('/meshes/paging/traffic-routes')).body)).toEqual(ROUTES);
  });

  it('links the next page with the same scheme, host, path and query, offset moved on to a cursor after the last item', async () => {
    const { body } = await api.get('/meshes/paging/traffic-routes?size=2');
    expect(body).toMatchObject({ total: 7, next: `${api.url}/meshes/paging/traffic-routes?offset=${after('paging', 'tr-02')}&size=2` });
    expect(names(body)).toEqual(['tr-01', 'tr-02']);
    const second = (await api.get(body.next.slice(api.url.length))).body;
    expect(names(second)).toEqual(['tr-03', 'tr-04']);
  });

  it('takes a numeric offset as an index, as before', async () => {
    expect(names((await api.get('/meshes/paging/traffic-routes?size=2&offset=2')).body)).toEqual(['tr-03', 'tr-04']);
  });

  it('resumes after the item a cursor names, even once it is gone, and counts an offset from there', async () => {
    expect(names((await api.get(`/meshes/paging/traffic-routes?offset=${after('paging', 'tr-03')}&size=2`)).body)).toEqual(['tr-04', 'tr-05']);
    expect(names((await api.get(`/meshes/paging/traffic-routes?offset=${after('paging', 'tr-035')}&size=2`)).body)).toEqual(['tr-04', 'tr-05']);
    expectJson(await api.get(`/meshes/paging/traffic-routes?offset=${after('paging', 'tr-07')}`), 200, { total: 7, items: [], next: null });
  });

  it('neither skips nor repeats an item when items before and after the cursor are written between pages', async () => {
    await api.put('/meshes/paging/traffic-routes/tr-00', trafficRoute('tr-00', 'paging'));
    try {
      const first = (await api.get('/meshes/paging/traffic-routes?size=3')).body;
      expect(names(first)).toEqual(['tr-00', 'tr-01', 'tr-02']);
      // Before the cursor: one gone, one new; after it: one new.
      await api.del('/meshes/paging/traffic-routes/tr-00');
      await api.put('/meshes/paging/traffic-routes/tr-015', trafficRoute('tr-015', 'paging'));
      await api.put('/meshes/paging/traffic-routes/tr-065', trafficRoute('tr-065', 'paging'));
      const rest: string[] = [];
      for (let url: string | null = first.next; url !== null; ) {
        const page = (await (await fetch(url)).json()) as { items: Array<{ name: string }>; next: string | null };
        rest.push(...names(page));
        url = page.next;
      }
      expect(rest).toEqual(['tr-03', 'tr-04', 'tr-05', 'tr-06', 'tr-065', 'tr-07']);
    } finally {
      await api.del('/meshes/paging/traffic-routes/tr-015');
      await api.del('/meshes/paging/traffic-routes/tr-065');
    }
  });

  it.each(['~', '~!!', `~${Buffer.from('no separator').toString('base64url')}`, `${after('paging', 'tr-01')}=`])('refuses a cursor it did not write: offset=%s', async (offset) => {
    expectJson(await api.get(`/meshes/paging/traffic-routes?offset=${encodeURIComponent(offset)}`), 400, stdError(400, LIST, 'Invalid offset', [['offset', 'Invalid format']]));
  });

  it('has no next page on the last page', async () => {
    const { body } = await api.get('/meshes/paging/traffic-routes?size=2&offset=6');
    expect(body).toEqual(expect.objectContaining({ total: 7, next: null }));
    expect(names(body)).toEqual(['tr-07']);
  });

  it('has no next page when the page ends exactly at the last item', async () => {
    expect((await api.get('/meshes/paging/traffic-routes?size=7')).body.next).toBeNull();
  });

  it('answers an empty page for an offset past the end', async () => {
    expectJson(await api.get('/meshes/paging/traffic-routes?offset=50'), 200, { total: 7, items: [], next: null });
  });

  it('visits every item exactly once when a client follows next', async () => {
    const seen: string[] = [];
    let url: string | null = `${api.url}/meshes/paging/traffic-routes?size=3`;
    for (let pages = 0; url !== null && pages < 10; pages++) {
      const body = (await (await fetch(url)).json()) as { items: Array<{ name: string }>; next: string | null; total: number };
      expect(body.total).toBe(7);
      seen.push(...names(body));
      url = body.next;
    }
    expect(seen).toEqual(ROUTES);
  });

  it('keeps every original query parameter in next, keys sorted', async () => {
    const { body } = await api.get('/meshes/paging/traffic-routes?zeta=1&size=2&name=tr&offset=2');
    expect(body.next).toBe(`${api.url}/meshes/paging/traffic-routes?name=tr&offset=${after('paging', 'tr-04')}&size=2&zeta=1`);
  });

  it('keeps the request path as received in next', async () => {
    const { body } = await api.get('/meshes/paging/traffic-routes/?size=2');
    expect(body.next).toBe(`${api.url}/meshes/paging/traffic-routes/?offset=${after('paging', 'tr-02')}&size=2`);
  });

  it('accepts the largest page size, 1000', async () => {
    expect((await api.get('/meshes/paging/traffic-routes?size=1000')).status).toBe(200);
  });

  it.each(['abc', '-1', '1.5', '2e2'])('refuses size=%s as an invalid format', async (size) => {
    expectJson(await api.get(`/meshes/paging/traffic-routes?size=${size}`), 400, stdError(400, LIST, 'Invalid page size', [['size', 'invalid format']]));
  });

  it('refuses a page size over 1000', async () => {
    expectJson(
      await api.get('/meshes/paging/traffic-routes?size=2000'),
      400,
      stdError(400, LIST, 'Invalid page size', [['size', 'invalid page size of 2000. Maximum page size is 1000']]),
    );
  });

  it.each(['abc', '-1'])('refuses offset=%s', async (offset) => {
    expectJson(await api.get(`/meshes/paging/traffic-routes?offset=${offset}`), 400, stdError(400, LIST, 'Invalid offset', [['offset', 'Invalid format']]));
  });

  it('checks size before offset', async () => {
    expect((await api.get('/meshes/paging/traffic-routes?offset=x&size=x')).body.detail).toBe('Invalid page size');
  });

  it('filters by a case-sensitive substring of the name, counting only matches', async () => {
    const { body } = await api.get('/meshes/paging/traffic-routes?name=0&size=2');
    expect(body.total).toBe(7);
    expect(names((await api.get('/meshes/paging/traffic-routes?name=-0')).body)).toEqual(ROUTES);
    expectJson(await api.get('/meshes/paging/traffic-routes?name=TR'), 200, { total: 0, items: [], next: null });
    const some = (await api.get('/meshes/paging/traffic-routes?name=5')).body;
    expect([some.total, names(some)]).toEqual([1, ['tr-05']]);
  });

  it('pages the filtered list', async () => {
    const { body } = await api.get('/meshes/big/traffic-permissions?name=tp-10&size=3');
    expect(body).toMatchObject({ total: 5, next: `${api.url}/meshes/big/traffic-permissions?name=tp-10&offset=${after('big', 'tp-102')}&size=3` });
    expect(names(body)).toEqual(['tp-100', 'tp-101', 'tp-102']);
    const rest = (await api.get(body.next.slice(api.url.length))).body;
    expect([rest.total, names(rest), rest.next]).toEqual([5, ['tp-103', 'tp-104'], null]);
  });
});

describe('lists across meshes', () => {
  beforeAll(async () => {
    api = await startApi();
    await api.put('/meshes/zz', emptyMesh('zz'));
    await api.put('/meshes/aa', emptyMesh('aa'));
    for (const [mesh, name] of [
      ['zz', 'a-route'],
      ['aa', 'z-route'],
      ['aa', 'a.route'],
      ['aa', 'a-route'],
      ['aa', 'a0route'],
      ['zz', 'b-route'],
    ] as const) {
      await api.put(`/meshes/${mesh}/traffic-routes/${name}`, trafficRoute(name, mesh));
    }
  });
  afterAll(async () => {
    await api.close();
  });

  it('sorts by mesh, then by name in code-unit order', async () => {
    expect(meshNames((await api.get('/traffic-routes')).body)).toEqual([
      'aa/a-route',
      'aa/a.route',
      'aa/a0route',
      'aa/z-route',
      'default/route-all-default',
      'zz/a-route',
      'zz/b-route',
    ]);
  });

  it('pages across mesh boundaries', async () => {
    const { body } = await api.get('/traffic-routes?size=3&offset=3');
    expect(meshNames(body)).toEqual(['aa/z-route', 'default/route-all-default', 'zz/a-route']);
    expect(body.next).toBe(`${api.url}/traffic-routes?offset=${after('zz', 'a-route')}&size=3`);
    expect(meshNames((await api.get(body.next.slice(api.url.length))).body)).toEqual(['zz/b-route']);
  });

  it('lists only the mesh of the path', async () => {
    expect(meshNames((await api.get('/meshes/zz/traffic-routes')).body)).toEqual(['zz/a-route', 'zz/b-route']);
  });

  it('filters by name across meshes', async () => {
    expect(meshNames((await api.get('/traffic-routes?name=a-route')).body)).toEqual(['aa/a-route', 'zz/a-route']);
  });
});

describe('dataplane filters', () => {
  beforeAll(async () => {
    api = await startApi();
    await api.put('/meshes/other', emptyMesh('other'));
    const dataplanes = [
      dataplane('web-1', { tags: { 'mesh.io/service': 'web', version: 'v1' } }),
      dataplane('web-2', { tags: { 'mesh.io/service': 'web', version: 'v2' } }),
      dataplane('backend', { tags: { 'mesh.io/service': 'backend', version: 'v1' } }),
      dataplane('multi', { inbounds: [{ 'mesh.io/service': 'api', version: 'v3' }, { 'mesh.io/service': 'api-admin', role: 'admin' }] }),
      dataplane('colon', { tags: { 'mesh.io/service': 'colon', team: 'a:b' } }),
      dataplane('gw-builtin', { gateway: { tags: { 'mesh.io/service': 'edge' }, type: 'BUILTIN' } }),
      dataplane('gw-delegated', { gateway: { tags: { 'mesh.io/service': 'ingress' } } }),
      dataplane('web-3', { mesh: 'other', tags: { 'mesh.io/service': 'web', version: 'v1' } }),
    ];
    for (const dp of dataplanes) {
      const reply = await api.put(`/meshes/${dp.mesh}/dataplanes/${dp.name}`, dp);
      expect(reply.status).toBe(201);
    }
  });
  afterAll(async () => {
    await api.close();
  });

  const listed = async (query: string, path = '/meshes/default/dataplanes') => {
    const reply = await api.get(`${path}?${query}`);
    expect(reply.status).toBe(200);
    expect(reply.body.total).toBe(reply.body.items.length);
    return names(reply.body);
  };

  it('keeps dataplanes with a tag whose value contains the wanted one', async () => {
    expect(await listed('tag=mesh.io/service:we')).toEqual(['web-1', 'web-2']);
  });

  it('matches any value with `*`', async () => {
    expect(await listed('tag=version:*')).toEqual(['backend', 'multi', 'web-1', 'web-2']);
  });

  it('needs every wanted tag in one and the same tag set', async () => {
    expect(await listed('tag=version:v3&tag=role:admin')).toEqual([]);
    expect(await listed('tag=mesh.io/service:api-admin&tag=role:admin')).toEqual(['multi']);
  });

  it('splits key and value at the first colon', async () => {
    expect(await listed('tag=team:a:b')).toEqual(['colon']);
  });

  it('lets the last value of a repeated key win', async () => {
    expect(await listed('tag=version:v2&tag=version:v1')).toEqual(['backend', 'web-1']);
  });

  it('ignores a tag filter without a colon', async () => {
    expect(await listed('tag=version')).toHaveLength(7);
  });

  it('looks at gateway tags too', async () => {
    expect(await listed('tag=mesh.io/service:edge')).toEqual(['gw-builtin']);
  });

  it('filters across meshes on /dataplanes', async () => {
    expect(meshNames((await api.get('/dataplanes?tag=mesh.io/service:web')).body)).toEqual(['default/web-1', 'default/web-2', 'other/web-3']);
  });

  it('does not mistake inherited object properties for tags', async () => {
    for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(await listed(`tag=${key}:*`)).toEqual([]);
      expect(await listed(`tag=${key}:x`)).toEqual([]);
    }
  });

  it('repeats the tag parameters in next, sorted and form-encoded', async () => {
    const { body } = await api.get('/dataplanes?tag=version:v1&size=1&tag=mesh.io/service:web');
    expect(body.next).toBe(`${api.url}/dataplanes?offset=${after('default', 'web-1')}&size=1&tag=version%3Av1&tag=mesh.io%2Fservice%3Aweb`);
  });

  it('encodes next as the reference does (`*` escaped, `~` kept, space as +)', async () => {
    const { body } = await api.get('/dataplanes?tag=version:*&size=1&y=~&x=a%20b');
    expect(body.next).toBe(`${api.url}/dataplanes?offset=${after('default', 'backend')}&size=1&tag=version%3A%2A&x=a+b&y=~`);
  });

  it.each([
    ['true', ['gw-builtin', 'gw-delegated']],
    ['false', ['backend', 'colon', 'multi', 'web-1', 'web-2']],
    ['builtin', ['gw-builtin']],
    ['delegated', ['gw-delegated']],
    ['BUILTIN', ['gw-builtin']],
    ['', ['backend', 'colon', 'gw-builtin', 'gw-delegated', 'multi', 'web-1', 'web-2']],
  ])('filters gateway=%s', async (gateway, expected) => {
    expect(await listed(`gateway=${gateway}`)).toEqual(expected);
  });

  it('combines the gateway and tag filters', async () => {
    expect(await listed('gateway=false&tag=version:v1')).toEqual(['backend', 'web-1']);
  });

  it('refuses an unknown gateway value, naming the route', async () => {
    const reason = "shoud use `true`, `false`, 'builtin' or 'delegated' instead of foo";
    expectJson(
      await api.get('/meshes/default/dataplanes?gateway=Foo'),
      400,
      stdError(400, LIST, 'Resource is not valid', [['/meshes/{mesh}/dataplanes.gateway', reason]]),
    );
    expectJson(await api.get('/dataplanes?gateway=foo'), 400, stdError(400, LIST, 'Resource is not valid', [['/dataplanes.gateway', reason]]));
  });

  it('checks the page size before the filters', async () => {
    expect((await api.get('/meshes/default/dataplanes?gateway=foo&size=x')).body.detail).toBe('Invalid page size');
  });
});

describe('external service filters', () => {
  beforeAll(async () => {
    api = await startApi();
    for (const es of [
      externalService('httpbin', { 'mesh.io/service': 'httpbin', env: 'prod' }),
      externalService('db', { 'mesh.io/service': 'db', env: 'dev' }),
      externalService('cache', { 'mesh.io/service': 'cache', env: 'production' }),
    ]) {
      expect((await api.put(`/meshes/default/external-services/${es.name}`, es)).status).toBe(201);
    }
  });
  afterAll(async () => {
    await api.close();
  });

  it('filters a mesh list by tag', async () => {
    expect(names((await api.get('/meshes/default/external-services?tag=env:prod')).body)).toEqual(['cache', 'httpbin']);
  });

  it('filters the list across meshes by tag', async () => {
    expect(names((await api.get('/external-services?tag=mesh.io/service:db')).body)).toEqual(['db']);
  });
});
