import { describe, expect, it } from 'vitest';
import type { AnyKind } from '../kind.js';
import { storedSpec } from '../test-support.js';
import { Violations } from '../validation/violations.js';
import { meshHTTPRouteKind } from './mesh-http-route.js';
import { meshTimeoutKind } from './mesh-timeout.js';
import { meshTraceKind } from './mesh-trace.js';
import { TARGET_REF_KINDS, TargetRefSchema, targetRefRank, validateTargetRef, type TargetRefKind } from './target-ref.js';

function violationsOf(ref: unknown, supported: readonly TargetRefKind[] = TARGET_REF_KINDS) {
  const v = new Violations();
  validateTargetRef(v, 'spec.targetRef', TargetRefSchema.parse(ref), supported);
  return v.list;
}

describe('targetRef', () => {
  it('accepts each kind with what it takes', () => {
    for (const ref of [
      { kind: 'Mesh' },
      { kind: 'MeshSubset', tags: { version: 'v1' } },
      { kind: 'MeshSubset' },
      { kind: 'MeshService', name: 'backend_v1' },
      { kind: 'MeshServiceSubset', name: 'backend', tags: { 'mesh.io/zone': 'east' } },
      { kind: 'MeshGateway', name: 'edge' },
      { kind: 'MeshHTTPRoute', name: 'route-1' },
    ]) {
      expect(violationsOf(ref), JSON.stringify(ref)).toEqual([]);
    }
  });

  it('needs a kind that the place it appears in supports', () => {
    expect(violationsOf({ name: 'web' })).toEqual([{ field: 'spec.targetRef.kind', message: 'must be defined' }]);
    expect(violationsOf({ kind: 'MeshGateway', name: 'edge' }, ['Mesh', 'MeshService'])).toEqual([{ field: 'spec.targetRef.kind', message: 'value is not supported' }]);
  });

  it('takes no name, mesh or tags with kind Mesh', () => {
    expect(violationsOf({ kind: 'Mesh', name: 'default', mesh: 'other', tags: { a: 'b' } })).toEqual([
      { field: 'spec.targetRef.name', message: 'using name with kind Mesh is not yet supported' },
      { field: 'spec.targetRef.mesh', message: 'must not be set with kind Mesh' },
      { field: 'spec.targetRef.tags', message: 'must not be set with kind Mesh' },
    ]);
  });

  it('selects a subset by valid tags only', () => {
    expect(violationsOf({ kind: 'MeshSubset', name: 'web', mesh: 'm', tags: { version: 'v*', '': 'x', 'a b': 'c', env: '' } })).toEqual([
      { field: 'spec.targetRef.name', message: 'must not be set with kind MeshSubset' },
      { field: 'spec.targetRef.mesh', message: 'must not be set with kind MeshSubset' },
      { field: 'spec.targetRef.tags', message: 'tag name must be non-empty' },
      { field: 'spec.targetRef.tags["a b"]', message: 'tag name must consist of alphanumeric characters, dots, dashes, slashes and underscores' },
      { field: 'spec.targetRef.tags["env"]', message: 'tag value must be non-empty' },
      { field: 'spec.targetRef.tags["version"]', message: 'tag value must consist of alphanumeric characters, dots, dashes and underscores' },
    ]);
  });

  it('names a service, route, subset or gateway with lowercase letters, digits, - and _', () => {
    expect(violationsOf({ kind: 'MeshService', tags: { a: 'b' } })).toEqual([
      { field: 'spec.targetRef.name', message: 'must be set with kind MeshService' },
      { field: 'spec.targetRef.tags', message: 'must not be set with kind MeshService' },
    ]);
    expect(violationsOf({ kind: 'MeshHTTPRoute', name: 'Route.1', mesh: 'm' })).toEqual([
      { field: 'spec.targetRef.name', message: "invalid characters. Valid characters are numbers, lowercase latin letters and '-', '_' symbols." },
      { field: 'spec.targetRef.mesh', message: 'must not be set with kind MeshHTTPRoute' },
    ]);
    expect(violationsOf({ kind: 'MeshGateway', tags: { port: '' } })).toEqual([
      { field: 'spec.targetRef.name', message: 'must be set with kind MeshGateway' },
      { field: 'spec.targetRef.tags["port"]', message: 'tag value must be non-empty' },
    ]);
    expect(violationsOf({ kind: 'MeshServiceSubset', name: 'backend' })).toEqual([]);
  });

  it('ranks kinds from the whole mesh to a route, the order rules merge in', () => {
    expect([...TARGET_REF_KINDS].sort((a, b) => targetRefRank(a) - targetRefRank(b))).toEqual([
      'Mesh',
      'MeshSubset',
      'MeshGateway',
      'MeshService',
      'MeshServiceSubset',
      'MeshHTTPRoute',
    ]);
  });

  it('writes tags in key order and leaves out what is empty', () => {
    expect(JSON.stringify(TargetRefSchema.parse({ mesh: '', tags: { b: '2', a: '1' }, name: 'x', kind: 'MeshServiceSubset' }))).toBe(
      '{"kind":"MeshServiceSubset","name":"x","tags":{"a":"1","b":"2"}}',
    );
    expect(JSON.stringify(TargetRefSchema.parse({ kind: 'Mesh', tags: {} }))).toBe('{"kind":"Mesh"}');
  });

  it('reads a stored spec back as itself, so copies synced to zones are stored unchanged', () => {
    const specs: Array<[AnyKind, unknown]> = [
      [meshTimeoutKind, { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'Mesh' }, default: { idleTimeout: '90m', http: { requestTimeout: '250ms' } } }, { targetRef: { kind: 'Mesh' } }] }],
      [meshHTTPRouteKind, { to: [{ rules: [{ matches: [{ path: { type: 'Exact', value: '/' } }], default: { backendRefs: [{ kind: 'MeshService', name: 'b', weight: 0 }] } }] }] }],
      [meshTraceKind, { targetRef: { kind: 'MeshSubset', tags: { z: '1', a: '2' } } }],
    ];
    for (const [kind, spec] of specs) {
      const stored = storedSpec(kind, spec);
      expect(storedSpec(kind, stored), kind.name).toEqual(stored);
      expect(JSON.stringify(kind.schema.parse(stored)), kind.name).toBe(JSON.stringify(stored));
    }
  });
});
