import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshProxyPatchKind } from './mesh-proxy-patch.js';

const violations = (yaml: string) => specViolationsOf(meshProxyPatchKind, parse(yaml));
const patch = (modifications: string) => `
targetRef: {kind: Mesh}
default:
  appendModifications: ${modifications}
`;
const at = (i: number, rest: string) => `spec.default.appendModifications[${i}].${rest}`;
const EOF = 'native Envoy resource is not valid: unexpected EOF';

describe('MeshProxyPatch', () => {
  it('accepts additions, patches and removals of every resource', () => {
    const spec = parse(patch(`
      - cluster:
          operation: Add
          value: |
            name: test-cluster
            connectTimeout: 5s
      - cluster:
          operation: Patch
          match: {name: test-cluster, origin: outbound}
          jsonPatches:
            - {op: replace, path: /connectTimeout, value: 1s}
            - {op: copy, from: /name, path: /altStatName}
      - listener:
          operation: Patch
          match: {tags: {mesh.io/service: backend}}
          value: '{"perConnectionBufferLimitBytes": 32768}'
      - networkFilter:
          operation: AddAfter
          match: {name: envoy.filters.network.tcp_proxy, listenerTags: {mesh.io/service: backend}}
          value: |
            name: envoy.filters.network.local_ratelimit
      - httpFilter:
          operation: Remove
          match: {name: envoy.filters.http.gzip}
      - virtualHost:
          operation: Add
          match: {routeConfigurationName: outbound:backend}
          value: |
            name: backend
            domains: ["backend.mesh"]
    `));
    expect(specViolationsOf(meshProxyPatchKind, spec)).toEqual([]);
    const stored = storedSpec(meshProxyPatchKind, spec) as { default: { appendModifications: Array<Record<string, unknown>> } };
    expect(stored.default.appendModifications[1]).toEqual({
      cluster: {
        match: { origin: 'outbound', name: 'test-cluster' },
        operation: 'Patch',
        jsonPatches: [
          { op: 'replace', path: '/connectTimeout', value: '1s' },
          { op: 'copy', path: '/altStatName', from: '/name' },
        ],
      },
    });
  });

  it('needs modifications, each naming what it modifies', () => {
    expect(violations('{targetRef: {kind: Mesh}, default: {appendModifications: []}}')).toEqual([
      { field: 'spec.default.appendModifications', message: 'must not be empty' },
    ]);
    expect(violations(patch('[{}]'))).toEqual([{ field: at(0, '').slice(0, -1), message: 'at least one modification has to be defined' }]);
  });

  it('checks cluster and listener modifications', () => {
    for (const resource of ['cluster', 'listener']) {
      expect(violations(patch(`
        - ${resource}: {operation: Add, value: '{'}
        - ${resource}: {operation: Patch, value: '{'}
        - ${resource}: {operation: Add, match: {name: "inbound:127.0.0.1:80"}, value: "name: xyz"}
        - ${resource}: {operation: Remove, value: "name: xyz"}
        - ${resource}: {operation: Add}
        - ${resource}: {operation: Patch}
        - ${resource}: {operation: Patch, value: '{}', jsonPatches: [{op: remove, path: ""}]}
      `))).toEqual([
        { field: at(0, `${resource}.value`), message: EOF },
        { field: at(1, `${resource}.value`), message: EOF },
        { field: at(2, `${resource}.match`), message: 'must not be defined' },
        { field: at(3, `${resource}.value`), message: 'must not be defined' },
        { field: at(4, `${resource}.value`), message: 'must be defined' },
        { field: at(5, resource), message: `${resource} must have exactly one defined: value, jsonPatches` },
        { field: at(6, resource), message: `${resource} must have only one type defined: value, jsonPatches` },
      ]);
    }
  });

  it('checks network and HTTP filter modifications', () => {
    for (const filter of ['networkFilter', 'httpFilter']) {
      expect(violations(patch(`
        - ${filter}: {operation: AddFirst, value: '{'}
        - ${filter}: {operation: AddBefore, value: '{'}
        - ${filter}: {operation: AddAfter, value: '{'}
        - ${filter}: {operation: Patch, value: '{'}
        - ${filter}: {operation: Remove, value: '{'}
        - ${filter}: {operation: Patch, value: '{}', jsonPatches: [{op: remove, path: ""}]}
        - ${filter}: {operation: AddLast}
      `))).toEqual([
        { field: at(0, `${filter}.value`), message: EOF },
        { field: at(1, `${filter}.match.name`), message: 'must be defined. You need to pick a filter before which this one will be added' },
        { field: at(1, `${filter}.value`), message: EOF },
        { field: at(2, `${filter}.match.name`), message: 'must be defined. You need to pick a filter after which this one will be added' },
        { field: at(2, `${filter}.value`), message: EOF },
        { field: at(3, `${filter}.match.name`), message: 'must be defined' },
        { field: at(3, `${filter}.value`), message: EOF },
        { field: at(4, `${filter}.value`), message: 'must not be defined' },
        { field: at(5, `${filter}.match.name`), message: 'must be defined' },
        { field: at(5, filter), message: `${filter} must have only one type defined: value, jsonPatches` },
        { field: at(6, `${filter}.value`), message: 'must be defined' },
      ]);
    }
  });

  it('checks virtual host modifications, which always match', () => {
    expect(violations(patch(`
      - virtualHost: {operation: Add, match: {name: xyz}, value: '{'}
      - virtualHost: {operation: Patch, match: {}, value: '{'}
      - virtualHost: {operation: Remove, match: {}, value: '{'}
      - virtualHost: {operation: Patch, match: {}, value: '{}', jsonPatches: [{op: remove, path: ""}]}
    `))).toEqual([
      { field: at(0, 'virtualHost.match.name'), message: 'must not be defined' },
      { field: at(0, 'virtualHost.value'), message: EOF },
      { field: at(1, 'virtualHost.value'), message: EOF },
      { field: at(2, 'virtualHost.value'), message: 'must not be defined' },
      { field: at(3, 'virtualHost'), message: 'virtualHost must have only one type defined: value, jsonPatches' },
    ]);
  });

  it('checks JSON patches: from only with move and copy, a value only with add and replace, never the root removed', () => {
    expect(violations(patch(`
      - cluster:
          operation: Patch
          jsonPatches:
            - {op: move, path: /a}
            - {op: add, path: /a, from: /b}
            - {op: remove, path: /, value: 1}
    `))).toEqual([
      { field: at(0, 'cluster.jsonPatches[0].from'), message: '"from" must not be empty when "op" is one of ["move", "copy"]' },
      { field: at(0, 'cluster.jsonPatches[1].from'), message: '"from" is allowed only when "op" is one of ["move", "copy"]' },
      { field: at(0, 'cluster.jsonPatches[1].value'), message: '"value" must not be empty when "op" is one of ["add", "replace"]' },
      { field: at(0, 'cluster.jsonPatches[2].value'), message: '"value" is allowed only when "op" is one of ["add", "replace"]' },
      { field: at(0, 'cluster.jsonPatches[2].path'), message: 'root path cannot be removed' },
    ]);
  });

  it('checks operations, the target and required fields against the schema first', () => {
    expect(violations(`
      targetRef: {kind: MeshHTTPRoute, name: route}
      default:
        appendModifications:
          - cluster: {operation: AddFirst}
          - networkFilter: {operation: Add}
          - virtualHost: {operation: Remove}
          - httpFilter: {operation: Patch, jsonPatches: [{op: test, path: /a}]}
    `)).toEqual([
      { field: at(0, 'cluster.operation'), message: 'in body should be one of [Add Remove Patch]' },
      { field: at(1, 'networkFilter.operation'), message: 'in body should be one of [Remove Patch AddFirst AddBefore AddAfter AddLast]' },
      { field: at(2, 'virtualHost.match'), message: 'in body is required' },
      { field: at(3, 'httpFilter.jsonPatches[0].op'), message: 'in body should be one of [add remove replace move copy]' },
    ]);
    expect(violations('targetRef: {kind: MeshHTTPRoute, name: route}')).toEqual([{ field: 'spec.default', message: 'in body is required' }]);
    expect(violations(patch('[{virtualHost: {operation: Remove, match: {}}}]').replace('kind: Mesh', 'kind: MeshHTTPRoute, name: r'))).toEqual([
      { field: 'spec.targetRef.kind', message: 'value is not supported' },
    ]);
  });
});
