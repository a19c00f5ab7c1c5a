import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshHealthCheckKind } from './mesh-health-check.js';

const violations = (yaml: string) => specViolationsOf(meshHealthCheckKind, parse(yaml));
/** Health checks of backend, as seen from web. */
const checks = (conf: string) => `
targetRef: {kind: MeshService, name: web}
to:
  - targetRef: {kind: MeshService, name: backend}
    default: ${conf}
`;
const AT = 'spec.to[0].default';

describe('MeshHealthCheck', () => {
  it('accepts every setting of TCP, HTTP and gRPC checks', () => {
    const spec = parse(checks(`
      interval: 10s
      timeout: 2s
      unhealthyThreshold: 3
      healthyThreshold: 1
      initialJitter: 5s
      intervalJitter: 6s
      intervalJitterPercent: 10
      healthyPanicThreshold: 60
      failTrafficOnPanic: true
      noTrafficInterval: 10s
      eventLogPath: /tmp/health-check.log
      alwaysLogHealthCheckFailures: true
      reuseConnection: false
      tcp: {disabled: true, send: Zm9v, receive: [YmFy, YmF6]}
      http:
        disabled: true
        path: /health
        requestHeadersToAdd:
          set: [{name: content-type, value: application/json}]
          add: [{name: accept, value: application/json}]
        expectedStatuses: [200, 201]
      grpc: {disabled: false, serviceName: "", authority: ""}
    `));
    expect(specViolationsOf(meshHealthCheckKind, spec)).toEqual([]);
    expect(storedSpec(meshHealthCheckKind, spec)).toMatchObject({ to: [{ default: { grpc: { disabled: false, serviceName: '', authority: '' }, reuseConnection: false } }] });
  });

  it('applies on a gateway too', () => {
    expect(violations(`
      targetRef: {kind: MeshGateway, name: edge}
      to: [{targetRef: {kind: MeshService, name: backend}, default: {interval: 10s, tcp: {disabled: true}}}]
    `)).toEqual([]);
  });

  it('takes destinations from the mesh or a service', () => {
    expect(violations(`
      targetRef: {kind: MeshHTTPRoute, name: route}
      to: [{targetRef: {kind: MeshSubset}, default: {tcp: {}}}]
    `)).toEqual([
      { field: 'spec.targetRef.kind', message: 'value is not supported' },
      { field: 'spec.to[0].targetRef.kind', message: 'value is not supported' },
    ]);
  });

  it('needs an HTTP, TCP or gRPC check', () => {
    expect(violations(checks('{}'))).toEqual([{ field: AT, message: 'must have at least one defined: http, tcp, grpc' }]);
  });

  it('needs positive thresholds and durations', () => {
    expect(violations(checks('{unhealthyThreshold: -3, healthyThreshold: 0, grpc: {}}'))).toEqual([
      { field: `${AT}.unhealthyThreshold`, message: 'must be greater than zero when defined' },
      { field: `${AT}.healthyThreshold`, message: 'must be greater than zero when defined' },
    ]);
    expect(violations(checks('{interval: -10s, timeout: -2s, initialJitter: -5s, intervalJitter: -6s, noTrafficInterval: 0s, grpc: {}}'))).toEqual(
      ['interval', 'timeout', 'initialJitter', 'intervalJitter', 'noTrafficInterval'].map((name) => ({ field: `${AT}.${name}`, message: 'must be greater than zero when defined' })),
    );
  });

  it('keeps percentages within [0, 100]', () => {
    expect(violations(checks('{intervalJitterPercent: 110, healthyPanicThreshold: -10, grpc: {}}'))).toEqual([
      { field: `${AT}.intervalJitterPercent`, message: 'has to be in [0 - 100] range' },
      { field: `${AT}.healthyPanicThreshold`, message: 'has to be in [0.0 - 100.0] range' },
    ]);
  });

  it('needs a valid event log path, HTTP path and statuses', () => {
    expect(violations(checks('{eventLogPath: "#not_valid_path", http: {path: "", expectedStatuses: [99, 200, 600]}}'))).toEqual([
      { field: `${AT}.eventLogPath`, message: 'has to be a valid path when defined' },
      { field: `${AT}.http.path`, message: 'must be defined' },
      { field: `${AT}.http.expectedStatuses[0]`, message: 'must be in range [100, 600)' },
      { field: `${AT}.http.expectedStatuses[2]`, message: 'must be in range [100, 600)' },
    ]);
  });

  it('checks header names against the schema: lowercase, at most 16 of each', () => {
    const many = JSON.stringify(Array.from({ length: 17 }, (_, i) => ({ name: `x-${i}`, value: 'v' })));
    expect(violations(checks(`{http: {requestHeadersToAdd: {set: [{name: Content-Type, value: a}], add: ${many}}}}`))).toEqual([
      { field: `${AT}.http.requestHeadersToAdd.set[0].name`, message: "in body should match '^[a-z0-9!#$%&'*+\\-.^_\\x60|~]+$'" },
      { field: `${AT}.http.requestHeadersToAdd.add`, message: 'in body should have at most 16 items' },
    ]);
  });
});
