import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshTrafficPermissionKind } from './mesh-traffic-permission.js';

const violations = (yaml: string) => specViolationsOf(meshTrafficPermissionKind, parse(yaml));

describe('MeshTrafficPermission', () => {
  it('allows or denies every kind of client, on every kind of target', () => {
    expect(violations(`
      targetRef: {kind: Mesh}
      from:
        - {targetRef: {kind: Mesh}, default: {action: Allow}}
        - {targetRef: {kind: MeshSubset, tags: {mesh.io/zone: us-east, env: dev}}, default: {action: Deny}}
        - {targetRef: {kind: MeshService, name: backend}, default: {action: AllowWithShadowDeny}}
        - {targetRef: {kind: MeshServiceSubset, name: backend, tags: {version: v1}}, default: {action: Deny}}
    `)).toEqual([]);
    for (const target of ['{kind: MeshSubset, tags: {env: prod}}', '{kind: MeshService, name: backend}', '{kind: MeshServiceSubset, name: backend, tags: {version: v2}}']) {
      expect(violations(`{targetRef: ${target}, from: [{targetRef: {kind: Mesh}, default: {action: Deny}}]}`), target).toEqual([]);
    }
  });

  it('is stored as sent, its conf in `default`', () => {
    const spec = { targetRef: { kind: 'MeshService', name: 'backend' }, from: [{ targetRef: { kind: 'Mesh' }, default: { action: 'Allow' } }] };
    expect(storedSpec(meshTrafficPermissionKind, spec)).toEqual(spec);
  });

  it('needs clients, each with an action', () => {
    expect(violations('{targetRef: {kind: MeshService, name: backend}, from: []}')).toEqual([{ field: 'spec.from', message: 'needs at least one item' }]);
    expect(violations('{targetRef: {kind: Mesh}, from: [{targetRef: {kind: Mesh}}]}')).toEqual([{ field: 'spec.from[0].default.action', message: 'must be defined' }]);
  });

  it('does not take gateways or routes as targets or clients', () => {
    expect(violations(`
      targetRef: {kind: MeshGateway, name: edge}
      from: [{targetRef: {kind: MeshHTTPRoute, name: route}, default: {action: Allow}}]
    `)).toEqual([
      { field: 'spec.targetRef.kind', message: 'value is not supported' },
      { field: 'spec.from[0].targetRef.kind', message: 'value is not supported' },
    ]);
  });

  it('checks actions and names against the schema first', () => {
    expect(violations(`
      targetRef: {kind: MeshService, name: 2}
      from: [{targetRef: {kind: Mesh}, default: {action: foo}}]
    `)).toEqual([
      { field: 'spec.targetRef.name', message: 'in body must be of type string: "number"' },
      { field: 'spec.from[0].default.action', message: 'in body should be one of [Allow Deny AllowWithShadowDeny]' },
    ]);
  });
});
