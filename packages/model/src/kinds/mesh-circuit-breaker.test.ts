import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshCircuitBreakerKind } from './mesh-circuit-breaker.js';

const violations = (yaml: string) => specViolationsOf(meshCircuitBreakerKind, parse(yaml));
/** A policy on service web with one outbound entry toward backend configured by `conf`. */
const toBackend = (conf: string) => `
targetRef: {kind: MeshService, name: web}
to:
  - targetRef: {kind: MeshService, name: backend}
    default: ${conf}
`;

const AT = 'spec.to[0].default';

describe('MeshCircuitBreaker', () => {
  it('accepts connection limits and outlier detection with every detector, inbound and outbound', () => {
    const spec = parse(`
      targetRef: {kind: MeshService, name: web}
      from:
        - targetRef: {kind: Mesh}
          default: &conf
            connectionLimits: {maxConnections: 2, maxConnectionPools: 2, maxPendingRequests: 2, maxRetries: 1, maxRequests: 32}
            outlierDetection:
              disabled: false
              interval: 5s
              baseEjectionTime: 30s
              maxEjectionPercent: 20
              splitExternalAndLocalErrors: true
              detectors:
                totalFailures: {consecutive: 10}
                gatewayFailures: {consecutive: 10}
                localOriginFailures: {consecutive: 10}
                successRate: {minimumHosts: 5, requestVolume: 10, standardDeviationFactor: "1.9"}
                failurePercentage: {requestVolume: 10, minimumHosts: 5, threshold: 85}
      to:
        - targetRef: {kind: Mesh}
          default: *conf
        - targetRef: {kind: MeshService, name: backend}
          default:
            outlierDetection:
              interval: 1m
              detectors: {successRate: {standardDeviationFactor: 1900}}
    `);
    expect(specViolationsOf(meshCircuitBreakerKind, spec)).toEqual([]);
    expect(storedSpec(meshCircuitBreakerKind, spec)).toMatchObject({
      to: [{ default: { connectionLimits: { maxRequests: 32 } } }, { default: { outlierDetection: { interval: '1m0s', detectors: { successRate: { standardDeviationFactor: 1900 } } } } }],
    });
  });

  it('accepts an entry with empty connection limits', () => {
    expect(violations(toBackend('{connectionLimits: {}}'))).toEqual([]);
  });

  it('needs a from or a to entry, each with limits or outlier detection', () => {
    expect(violations('targetRef: {kind: Mesh}')).toEqual([{ field: 'spec', message: "at least one of 'from', 'to' has to be defined" }]);
    expect(violations(toBackend('{}'))).toEqual([{ field: AT, message: "at least one of: 'connectionLimits' or 'outlierDetection' should be configured" }]);
  });

  it('takes clients from the whole mesh, destinations from the mesh or a service', () => {
    expect(violations(`
      targetRef: {kind: MeshGateway, name: edge}
      from: [{targetRef: {kind: MeshSubset, tags: {a: b}}, default: {connectionLimits: {}}}]
      to: [{targetRef: {kind: MeshServiceSubset, name: backend}, default: {connectionLimits: {}}}]
    `)).toEqual([
      { field: 'spec.targetRef.kind', message: 'value is not supported' },
      { field: 'spec.from[0].targetRef.kind', message: 'value is not supported' },
      { field: 'spec.to[0].targetRef.kind', message: 'value is not supported' },
    ]);
  });

  it('refuses limits of zero', () => {
    expect(violations(toBackend('{connectionLimits: {maxConnections: 0, maxConnectionPools: 0, maxPendingRequests: 0, maxRetries: 0, maxRequests: 0}}'))).toEqual(
      ['maxConnections', 'maxConnectionPools', 'maxPendingRequests', 'maxRetries', 'maxRequests'].map((name) => ({
        field: `${AT}.connectionLimits.${name}`,
        message: 'must be greater than 0',
      })),
    );
  });

  it('refuses zero durations, counts and factors in outlier detection', () => {
    expect(violations(toBackend(`
      outlierDetection:
        interval: 0s
        baseEjectionTime: 0s
        maxEjectionPercent: 0
        detectors:
          totalFailures: {consecutive: 0}
          gatewayFailures: {consecutive: 0}
          localOriginFailures: {consecutive: 0}
          successRate: {minimumHosts: 0, requestVolume: 0, standardDeviationFactor: 0}
          failurePercentage: {requestVolume: 0, minimumHosts: 0, threshold: 0}
    `))).toEqual([
      { field: `${AT}.outlierDetection.interval`, message: 'must be greater than zero when defined' },
      { field: `${AT}.outlierDetection.baseEjectionTime`, message: 'must be greater than zero when defined' },
      { field: `${AT}.outlierDetection.detectors.totalFailures.consecutive`, message: 'must be greater than 0' },
      { field: `${AT}.outlierDetection.detectors.gatewayFailures.consecutive`, message: 'must be greater than 0' },
      { field: `${AT}.outlierDetection.detectors.localOriginFailures.consecutive`, message: 'must be greater than 0' },
      { field: `${AT}.outlierDetection.detectors.successRate.minimumHosts`, message: 'must be greater than 0' },
      { field: `${AT}.outlierDetection.detectors.successRate.requestVolume`, message: 'must be greater than 0' },
      { field: `${AT}.outlierDetection.detectors.successRate.standardDeviationFactor`, message: 'must be greater than 0' },
      { field: `${AT}.outlierDetection.detectors.failurePercentage.minimumHosts`, message: 'must be greater than 0' },
      { field: `${AT}.outlierDetection.detectors.failurePercentage.requestVolume`, message: 'must be greater than 0' },
    ]);
  });

  it('keeps percentages within 100', () => {
    expect(violations(toBackend('{outlierDetection: {maxEjectionPercent: 101, detectors: {failurePercentage: {threshold: 101}}}}'))).toEqual([
      { field: `${AT}.outlierDetection.maxEjectionPercent`, message: 'has to be in [0 - 100] range' },
      { field: `${AT}.outlierDetection.detectors.failurePercentage.threshold`, message: 'has to be in [0 - 100] range' },
    ]);
  });

  it('needs at least one detector', () => {
    expect(violations(toBackend('{outlierDetection: {maxEjectionPercent: 100}}'))).toEqual([{ field: `${AT}.outlierDetection.detectors`, message: 'must be defined' }]);
    expect(violations(toBackend('{outlierDetection: {detectors: {}}}'))).toEqual([
      {
        field: `${AT}.outlierDetection.detectors`,
        message: 'must have at least one defined: totalFailures, gatewayFailures, localOriginFailures, successRate, failurePercentage',
      },
    ]);
  });

  it('needs a number as the standard deviation factor', () => {
    expect(violations(toBackend('{outlierDetection: {detectors: {successRate: {standardDeviationFactor: xyz}}}}'))).toEqual([
      { field: `${AT}.outlierDetection.detectors.successRate.standardDeviationFactor`, message: 'invalid number' },
    ]);
  });

  it('fails decoding on a negative count, which Go cannot hold', () => {
    expect(() => violations(toBackend('{connectionLimits: {maxConnections: -1}}'))).toThrow(
      "invalid MeshCircuitBreaker object: 'json: cannot unmarshal number -1 into Go value of type uint32'",
    );
  });
});
