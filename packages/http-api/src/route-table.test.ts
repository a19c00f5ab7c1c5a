// The route table on its own: matching, captures, trailing slashes, decoding (docs/api.md, HTTP).
import { describe, expect, it } from 'vitest';
import { RouteTable, type Handler } from './route-table.js';
import type { RouteDoc } from './route-doc.js';

const handler = (): Handler => () => undefined;
const doc: RouteDoc = { summary: 'a route', tag: 'test', responses: {}, errors: [] };

function table(): RouteTable {
  return new RouteTable()
    .add({ method: 'GET', path: '/meshes', handler: handler(), doc })
    .add({ method: 'GET', path: '/meshes/{name}', handler: handler(), doc })
    .add({ method: 'PUT', path: '/meshes/{name}', handler: handler(), doc })
    .add({ method: 'DELETE', path: '/meshes/{name}', handler: handler(), doc })
    .add({ method: 'GET', path: '/meshes/{mesh}/traffic-routes', handler: handler(), doc })
    .add({ method: 'GET', path: '/meshes/{mesh}/traffic-routes/{name}', handler: handler(), doc })
    .add({ method: 'GET', path: '/meshes/{mesh}/dataplanes/_overview', handler: handler(), doc })
    .add({ method: 'GET', path: '/meshes/{mesh}/dataplanes/{name}', handler: handler(), doc })
    .add({ method: 'GET', path: '/zones/{name}/_overview', handler: handler(), doc });
}

describe('RouteTable', () => {
  it('captures named segments', () => {
    expect(table().match('/meshes/default/traffic-routes/tr-1')?.params).toEqual({ mesh: 'default', name: 'tr-1' });
  });

  it('ignores a trailing slash', () => {
    expect(table().match('/meshes/')?.params).toEqual({});
    expect(table().match('/meshes/default/')?.params).toEqual({ name: 'default' });
  });

  it('decodes percent-encoded segments', () => {
    expect(table().match('/meshes/a%20b/traffic-routes/x%2Fy')?.params).toEqual({ mesh: 'a b', name: 'x/y' });
  });

  it('does not match a malformed percent-encoding', () => {
    expect(table().match('/meshes/%E0%A4%A')).toBeUndefined();
  });

  it('does not capture an empty segment', () => {
    expect(table().match('/meshes//traffic-routes')).toBeUndefined();
  });

  it('prefers a literal segment over a capture', () => {
    const match = table().match('/meshes/default/dataplanes/_overview');
    expect(match?.params).toEqual({ mesh: 'default' });
  });

  it('falls back to a capture when the literal branch leads nowhere', () => {
    expect(table().match('/meshes/default/dataplanes/dp-1')?.params).toEqual({ mesh: 'default', name: 'dp-1' });
    expect(table().match('/zones/_overview/_overview')?.params).toEqual({ name: '_overview' });
  });

  it('matches nothing for an unknown path', () => {
    expect(table().match('/nope')).toBeUndefined();
    expect(table().match('/meshes/default/traffic-routes/tr-1/extra')).toBeUndefined();
  });

  it('lists the methods of a path for Allow', () => {
    expect(table().match('/meshes/default')!.allow.split(', ').sort()).toEqual(['DELETE', 'GET', 'PUT']);
    expect(table().match('/meshes')!.allow).toBe('GET');
  });

  it('refuses the same method and path twice', () => {
    expect(() => table().add({ method: 'GET', path: '/meshes', handler: handler(), doc })).toThrow(/duplicate route/);
  });

  it('refuses two routes that name the same captures differently', () => {
    expect(() => table().add({ method: 'POST', path: '/meshes/{mesh}', handler: handler(), doc })).toThrow(/conflicting parameter names/);
  });
});
