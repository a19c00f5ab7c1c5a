import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { violationsOf } from '../test-support.js';
import { trafficPermissionKind } from './traffic-permission.js';

const validate = (body: unknown) => violationsOf(trafficPermissionKind, body);

describe('TrafficPermission', () => {
  it('accepts sources and destinations with tags and wildcards', () => {
    expect(
      validate({
        sources: [{ match: { 'mesh.io/service': '*' } }],
        destinations: [{ match: { 'mesh.io/service': 'backend', version: 'v1' } }],
      }),
    ).toEqual([]);
  });

  it('requires at least one source and destination', () => {
    expect(validate({})).toEqual([
      { field: 'sources', message: 'must have at least one element' },
      { field: 'destinations', message: 'must have at least one element' },
    ]);
  });

  it('reports empty selectors and bad tags with their paths', () => {
    expect(
      validate({
        sources: [{ match: {} }],
        destinations: [{ match: { 'bad key!': 'x', region: '', 'mesh.io/service': 'a b' } }],
      }),
    ).toEqual([
      { field: 'sources[0].match', message: 'must have at least one tag' },
      {
        field: 'destinations[0].match["bad key!"]',
        message: 'tag name must consist of alphanumeric characters, dots, dashes, slashes and underscores',
      },
      {
        field: 'destinations[0].match["mesh.io/service"]',
        message: 'tag value must consist of alphanumeric characters, dots, dashes, slashes and underscores or be "*"',
      },
      { field: 'destinations[0].match["region"]', message: 'tag value must be non-empty' },
    ]);
  });

  it('drops unknown fields, including a top-level spec object', () => {
    const decoded = decodeSpec(trafficPermissionKind, {
      sources: [{ match: { 'mesh.io/service': '*' }, extra: 1 }],
      destinations: [{ match: { 'mesh.io/service': '*' } }],
      spec: { anything: true },
    });
    expect(decoded).toEqual({
      ok: true,
      spec: { sources: [{ match: { 'mesh.io/service': '*' } }], destinations: [{ match: { 'mesh.io/service': '*' } }] },
    });
  });

  it('refuses a field of the wrong JSON type', () => {
    expect(decodeSpec(trafficPermissionKind, { sources: 'all' })).toMatchObject({ ok: false });
  });
});
