import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshHTTPRouteKind } from './mesh-http-route.js';

const violations = (yaml: string) => specViolationsOf(meshHTTPRouteKind, parse(yaml));
/** Routes of web's traffic to backend. */
const rules = (yaml: string) => `
targetRef: {kind: MeshService, name: web}
to:
  - targetRef: {kind: MeshService, name: backend}
    rules: ${yaml}
`;
const RULE = 'spec.to[0].rules[0]';
const PREFIX_MATCH = '[{path: {type: PathPrefix, value: /}}]';

describe('MeshHTTPRoute', () => {
  it('accepts matches, filters and weighted backends', () => {
    const spec = parse(rules(`
      - matches:
          - path: {type: PathPrefix, value: /api}
            method: GET
            queryParams: [{type: Exact, name: v, value: "2"}]
            headers: [{type: Present, name: x-canary}, {name: x-env, value: prod}]
        default:
          filters:
            - type: RequestHeaderModifier
              requestHeaderModifier: {set: [{name: x-route, value: api}], remove: [x-debug]}
            - type: URLRewrite
              urlRewrite: {hostname: api.internal, path: {type: ReplacePrefixMatch, replacePrefixMatch: /v2}}
            - type: RequestRedirect
              requestRedirect: {scheme: https, port: 8443, statusCode: 301, path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}
            - type: RequestMirror
              requestMirror: {percentage: 10, backendRef: {kind: MeshService, name: shadow}}
          backendRefs:
            - {kind: MeshServiceSubset, name: backend, tags: {version: v1}, weight: 90}
            - {kind: MeshServiceSubset, name: backend, tags: {version: v2}, weight: 10}
    `));
    expect(specViolationsOf(meshHTTPRouteKind, spec)).toEqual([]);
    expect(storedSpec(meshHTTPRouteKind, spec)).toMatchObject({
      to: [{ rules: [{ default: { backendRefs: [{ kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v1' }, weight: 90 }, {}] } }] }],
    });
  });

  it('accepts a route without destinations, and reads a missing targetRef as an empty one', () => {
    expect(violations('{targetRef: {kind: MeshService, name: web}, to: []}')).toEqual([]);
    expect(violations('to: []')).toEqual([{ field: 'spec.targetRef.kind', message: 'must be defined' }]);
  });

  it('routes the traffic of proxies to a service', () => {
    expect(violations(`
      targetRef: {kind: MeshGateway, name: edge}
      to: [{targetRef: {kind: Mesh}}, {}]
    `)).toEqual([
      { field: 'spec.targetRef.kind', message: 'value is not supported' },
      { field: 'spec.to[0].targetRef.kind', message: 'value is not supported' },
      { field: 'spec.to[1].targetRef.kind', message: 'must be defined' },
    ]);
  });

  it('matches absolute paths, prefixes without a trailing slash', () => {
    expect(violations(rules(`
      - matches:
          - path: {value: relative, type: Exact}
          - path: {value: /trailing/slash/, type: PathPrefix}
          - path: {value: relative, type: PathPrefix}
          - path: {value: /, type: PathPrefix}
          - path: {value: ".*", type: RegularExpression}
        default: {}
    `))).toEqual([
      { field: `${RULE}.matches[0].path.value`, message: 'must be an absolute path' },
      { field: `${RULE}.matches[1].path.value`, message: 'does not need a trailing slash because only a `/`-separated prefix or an entire path is matched' },
      { field: `${RULE}.matches[2].path.value`, message: 'must be an absolute path' },
    ]);
  });

  it('matches a query parameter once, and a present or absent header without a value', () => {
    expect(violations(rules(`
      - matches:
          - queryParams: [{type: Exact, name: foo, value: bar}, {type: Exact, name: foo, value: baz}]
            headers: [{type: Present, name: foo, value: x}, {type: Absent, name: foo, value: x}, {type: Prefix, name: foo, value: x}]
        default: {}
    `))).toEqual([
      { field: `${RULE}.matches[0].queryParams[1].name`, message: 'multiple entries for name foo' },
      { field: `${RULE}.matches[0].headers[0].value`, message: 'must not be defined' },
      { field: `${RULE}.matches[0].headers[1].value`, message: 'must not be defined' },
    ]);
  });

  it('needs the section each filter type names', () => {
    expect(violations(rules(`
      - matches: ${PREFIX_MATCH}
        default:
          filters: [{type: RequestHeaderModifier}, {type: ResponseHeaderModifier}, {type: RequestRedirect}, {type: RequestMirror}, {type: URLRewrite}]
    `))).toEqual(
      ['requestHeaderModifier', 'responseHeaderModifier', 'requestRedirect', 'requestMirror', 'urlRewrite'].map((field, i) => ({
        field: `${RULE}.default.filters[${i}].${field}`,
        message: 'must be defined',
      })),
    );
  });

  it('modifies a header once, and needs something to modify', () => {
    expect(violations(rules(`
      - matches: ${PREFIX_MATCH}
        default:
          filters:
            - type: RequestHeaderModifier
              requestHeaderModifier: {set: [{name: foo, value: bar}, {name: foo, value: bazz}]}
            - type: ResponseHeaderModifier
              responseHeaderModifier: {}
            - type: ResponseHeaderModifier
              responseHeaderModifier: {set: [{name: foo, value: bar}], add: [{name: foo, value: bar}], remove: [foo]}
    `))).toEqual([
      { field: `${RULE}.default.filters[0].requestHeaderModifier.set[1].name`, message: 'duplicate header name' },
      { field: `${RULE}.default.filters[1].responseHeaderModifier`, message: 'must have at least one defined: set, add, remove' },
      { field: `${RULE}.default.filters[2].responseHeaderModifier.add[0].name`, message: 'duplicate header name' },
      { field: `${RULE}.default.filters[2].responseHeaderModifier.remove[0].name`, message: 'duplicate header name' },
    ]);
  });

  it('rewrites a prefix only when every match is a prefix match', () => {
    expect(violations(rules(`
      - matches: [{path: {value: /prefix, type: Exact}}]
        default:
          filters:
            - type: URLRewrite
              urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /other}}
            - type: RequestRedirect
              requestRedirect: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /other}}
    `))).toEqual([
      { field: `${RULE}.default.filters[0].urlRewrite.path.replacePrefixMatch`, message: 'can only appear if all matches match a path prefix' },
      { field: `${RULE}.default.filters[1].requestRedirect.path.replacePrefixMatch`, message: 'can only appear if all matches match a path prefix' },
    ]);
  });

  it('sends and mirrors traffic to a service or a subset of it, named', () => {
    expect(violations(rules(`
      - matches: ${PREFIX_MATCH}
        default:
          filters: [{type: RequestMirror, requestMirror: {backendRef: {kind: MeshServiceSubset, tags: {version: v1}}}}]
          backendRefs: [{kind: MeshServiceSubset, tags: {version: v1}}, {kind: Mesh}]
    `))).toEqual([
      { field: `${RULE}.default.filters[0].requestMirror.backendRef.name`, message: 'must be set with kind MeshServiceSubset' },
      { field: `${RULE}.default.backendRefs[0].name`, message: 'must be set with kind MeshServiceSubset' },
      { field: `${RULE}.default.backendRefs[1].kind`, message: 'value is not supported' },
    ]);
  });

  it('checks rules against the schema first: matches and default required, enums, hostnames, ports', () => {
    expect(violations(rules(`
      - default: {}
      - matches: []
        default:
          filters: [{type: Rewrite}, {type: RequestRedirect, requestRedirect: {hostname: "*.example.com", port: 0, statusCode: 304}}]
          backendRefs: [{kind: MeshService, name: b, weight: -1}]
    `))).toEqual([
      { field: `${RULE}.matches`, message: 'in body is required' },
      { field: 'spec.to[0].rules[1].matches', message: 'in body should have at least 1 items' },
      { field: 'spec.to[0].rules[1].default.filters[0].type', message: 'in body should be one of [RequestHeaderModifier ResponseHeaderModifier RequestRedirect URLRewrite RequestMirror]' },
      {
        field: 'spec.to[0].rules[1].default.filters[1].requestRedirect.hostname',
        message: "in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'",
      },
      { field: 'spec.to[0].rules[1].default.filters[1].requestRedirect.port', message: 'in body should be greater than or equal to 1' },
      { field: 'spec.to[0].rules[1].default.filters[1].requestRedirect.statusCode', message: 'in body should be one of [301 302 303 307 308]' },
      { field: 'spec.to[0].rules[1].default.backendRefs[0].weight', message: 'in body should be greater than or equal to 0' },
    ]);
  });
});
