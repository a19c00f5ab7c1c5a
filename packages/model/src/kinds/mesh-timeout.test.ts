import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshTimeoutKind } from './mesh-timeout.js';

const violations = (yaml: string) => specViolationsOf(meshTimeoutKind, parse(yaml));
const ROUTE_LEVEL_ONLY = "can't be specified when top-level TargetRef is referencing MeshHTTPRoute";

describe('MeshTimeout', () => {
  it('accepts inbound and outbound timeouts and stores durations as Go writes them', () => {
    const spec = parse(`
      targetRef: {kind: MeshService, name: web}
      from:
        - targetRef: {kind: Mesh}
          default:
            connectionTimeout: 10s
            idleTimeout: 1h
            http: {requestTimeout: 0s, streamIdleTimeout: 90m, maxStreamDuration: 1h, maxConnectionDuration: 1.5h}
      to:
        - targetRef: {kind: MeshService, name: backend}
          default: {http: {requestTimeout: 1500ms}}
    `);
    expect(specViolationsOf(meshTimeoutKind, spec)).toEqual([]);
    expect(storedSpec(meshTimeoutKind, spec)).toEqual({
      targetRef: { kind: 'MeshService', name: 'web' },
      to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { http: { requestTimeout: '1.5s' } } }],
      from: [
        {
          targetRef: { kind: 'Mesh' },
          default: {
            connectionTimeout: '10s',
            idleTimeout: '1h0m0s',
            http: { requestTimeout: '0s', streamIdleTimeout: '1h30m0s', maxStreamDuration: '1h0m0s', maxConnectionDuration: '1h30m0s' },
          },
        },
      ],
    });
  });

  it('accepts request timeouts on a route, toward every destination', () => {
    expect(violations(`
      targetRef: {kind: MeshHTTPRoute, name: route-1}
      to: [{targetRef: {kind: Mesh}, default: {http: {requestTimeout: 1s, streamIdleTimeout: 2s}}}]
    `)).toEqual([]);
  });

  it('needs a from or a to entry', () => {
    expect(violations('targetRef: {kind: Mesh}')).toEqual([{ field: 'spec', message: "at least one of 'from', 'to' has to be defined" }]);
  });

  it('takes clients from the whole mesh and destinations from the mesh or a service', () => {
    expect(violations(`
      targetRef: {kind: MeshService, name: web}
      from: [{targetRef: {kind: MeshService, name: other}, default: {idleTimeout: 1s}}]
      to: [{targetRef: {kind: MeshServiceSubset, name: backend, tags: {version: v1}}, default: {idleTimeout: 1s}}]
    `)).toEqual([
      { field: 'spec.from[0].targetRef.kind', message: 'value is not supported' },
      { field: 'spec.to[0].targetRef.kind', message: 'value is not supported' },
    ]);
  });

  it('needs a timeout in each entry and in its http section', () => {
    expect(violations(`
      targetRef: {kind: Mesh}
      to:
        - targetRef: {kind: MeshService, name: backend}
        - targetRef: {kind: Mesh}
          default: {http: {}}
    `)).toEqual([
      { field: 'spec.to[0].default', message: 'at least one timeout should be configured' },
      { field: 'spec.to[1].default.http', message: 'at least one timeout in this section should be configured' },
    ]);
  });

  it('refuses negative timeouts and a connection timeout that is not positive', () => {
    expect(violations(`
      targetRef: {kind: Mesh}
      to:
        - targetRef: {kind: Mesh}
          default: {connectionTimeout: -1s, idleTimeout: -1s, http: {requestTimeout: -10s}}
        - targetRef: {kind: Mesh}
          default: {connectionTimeout: 0s}
    `)).toEqual([
      { field: 'spec.to[0].default.connectionTimeout', message: 'must be greater than zero when defined' },
      { field: 'spec.to[0].default.idleTimeout', message: 'must not be negative when defined' },
      { field: 'spec.to[0].default.http.requestTimeout', message: 'must not be negative when defined' },
      { field: 'spec.to[1].default.connectionTimeout', message: 'must be greater than zero when defined' },
    ]);
  });

  it('keeps connection timeouts off routes, and inbound entries off routes and gateways', () => {
    expect(violations(`
      targetRef: {kind: MeshHTTPRoute, name: route-1}
      to:
        - targetRef: {kind: MeshService, name: backend}
          default:
            connectionTimeout: 10s
            idleTimeout: 1h
            http: {requestTimeout: 1s, streamIdleTimeout: 1h, maxStreamDuration: 1h, maxConnectionDuration: 1h}
      from: [{targetRef: {kind: Mesh}, default: {connectionTimeout: 11s}}]
    `)).toEqual([
      { field: 'spec.from', message: 'must not be defined' },
      { field: 'spec.to[0].targetRef.kind', message: 'value is not supported' },
      { field: 'spec.to[0].default.connectionTimeout', message: ROUTE_LEVEL_ONLY },
      { field: 'spec.to[0].default.idleTimeout', message: ROUTE_LEVEL_ONLY },
      { field: 'spec.to[0].default.http.maxStreamDuration', message: ROUTE_LEVEL_ONLY },
      { field: 'spec.to[0].default.http.maxConnectionDuration', message: ROUTE_LEVEL_ONLY },
    ]);
    expect(violations(`
      targetRef: {kind: MeshGateway, name: edge}
      to: [{targetRef: {kind: MeshService, name: backend}, default: {connectionTimeout: 10s}}]
      from: [{targetRef: {kind: Mesh}, default: {connectionTimeout: 11s}}]
    `)).toEqual([
      { field: 'spec.from', message: 'must not be defined' },
      { field: 'spec.to[0].targetRef.kind', message: 'value is not supported' },
    ]);
  });

  it('checks the body against the schema first: types, required fields and kinds', () => {
    expect(violations(`
      to:
        - default: {idleTimeout: 5}
        - targetRef: {kind: MeshGatewayRoute}
    `)).toEqual([
      { field: 'spec.targetRef', message: 'in body is required' },
      { field: 'spec.to[0].targetRef', message: 'in body is required' },
      { field: 'spec.to[0].default.idleTimeout', message: 'in body must be of type string: "number"' },
      { field: 'spec.to[1].targetRef.kind', message: 'in body should be one of [Mesh MeshSubset MeshGateway MeshService MeshServiceSubset MeshHTTPRoute]' },
    ]);
  });

  it('fails decoding on a malformed duration, as Go does', () => {
    expect(() => violations('{targetRef: {kind: Mesh}, to: [{targetRef: {kind: Mesh}, default: {idleTimeout: 5 minutes}}]}')).toThrow(
      `invalid MeshTimeout object: 'time: invalid duration "5 minutes"'`,
    );
  });
});
