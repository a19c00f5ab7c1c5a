import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshTCPRouteKind } from './mesh-tcp-route.js';

const violations = (yaml: string) => specViolationsOf(meshTCPRouteKind, parse(yaml));

describe('MeshTCPRoute', () => {
  it('accepts a destination with or without a rule of weighted backends', () => {
    const spec = parse(`
      targetRef: {kind: MeshService, name: web}
      to:
        - targetRef: {kind: MeshService, name: backend}
          rules:
            - default:
                backendRefs:
                  - {kind: MeshServiceSubset, name: backend, tags: {version: v1}, weight: 90}
                  - {kind: MeshService, name: backend-v2, weight: 10}
        - targetRef: {kind: MeshService, name: other}
    `);
    expect(specViolationsOf(meshTCPRouteKind, spec)).toEqual([]);
    expect(storedSpec(meshTCPRouteKind, spec)).toEqual(spec);
  });

  it('routes the traffic of proxies to a service, toward named services or subsets', () => {
    expect(violations(`
      targetRef: {kind: MeshGateway, name: edge}
      to:
        - targetRef: {kind: Mesh}
        - targetRef: {kind: MeshService, name: backend}
          rules: [{default: {backendRefs: [{kind: MeshServiceSubset, tags: {version: v1}}, {kind: MeshSubset}]}}]
    `)).toEqual([
      { field: 'spec.targetRef.kind', message: 'value is not supported' },
      { field: 'spec.to[0].targetRef.kind', message: 'value is not supported' },
      { field: 'spec.to[1].rules[0].default.backendRefs[0].name', message: 'must be set with kind MeshServiceSubset' },
      { field: 'spec.to[1].rules[0].default.backendRefs[1].kind', message: 'value is not supported' },
    ]);
  });

  it('checks destinations, rules and backends against the schema first', () => {
    expect(violations('{targetRef: {kind: Mesh}, to: []}')).toEqual([{ field: 'spec.to', message: 'in body should have at least 1 items' }]);
    const rules = (yaml: string) => violations(`{targetRef: {kind: Mesh}, to: [{targetRef: {kind: MeshService, name: backend}, rules: ${yaml}}]}`);
    expect(rules('[{default: {backendRefs: [{kind: MeshService, name: a}]}}, {default: {backendRefs: [{kind: MeshService, name: b}]}}]')).toEqual([
      { field: 'spec.to[0].rules', message: 'in body should have at most 1 items' },
    ]);
    expect(rules('[{default: {backendRefs: []}}]')).toEqual([{ field: 'spec.to[0].rules[0].default.backendRefs', message: 'in body should have at least 1 items' }]);
    expect(rules('[{}]')).toEqual([{ field: 'spec.to[0].rules[0].default', message: 'in body is required' }]);
  });
});
