import { describe, expect, it } from 'vitest';
import { violationsOf, wireForm } from '../test-support.js';
import { circuitBreakerKind } from './circuit-breaker.js';

const validate = (body: unknown) => violationsOf(circuitBreakerKind, body);

const selectors = {
  sources: [{ match: { 'mesh.io/service': 'web', region: 'eu' } }],
  destinations: [{ match: { 'mesh.io/service': 'backend' } }],
};
const withConf = (conf: unknown) => ({ ...selectors, conf });

describe('CircuitBreaker', () => {
  it('accepts the default circuit breaker and returns it unchanged', () => {
    const body = {
      sources: [{ match: { 'mesh.io/service': '*' } }],
      destinations: [{ match: { 'mesh.io/service': '*' } }],
      conf: { thresholds: { maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 3 } },
    };
    expect(validate(body)).toEqual([]);
    expect(wireForm(circuitBreakerKind, body)).toEqual(body);
  });

  it('accepts every detector and threshold, keeping zero wrappers and dropping a false flag', () => {
    const body = withConf({
      interval: '1s',
      base_ejection_time: '30000ms',
      maxEjectionPercent: 0,
      splitExternalAndLocalErrors: false,
      detectors: {
        totalErrors: { consecutive: 20 },
        gatewayErrors: { consecutive: 10 },
        localErrors: { consecutive: 0 },
        standardDeviation: { requestVolume: 10, minimumHosts: 5, factor: 1.9 },
        failure: { requestVolume: 10, minimumHosts: 5, threshold: 85 },
      },
      thresholds: { maxConnections: 2, maxPendingRequests: 2, maxRetries: 2, maxRequests: 2 },
    });
    expect(validate(body)).toEqual([]);
    expect(wireForm(circuitBreakerKind, body)).toEqual(
      withConf({
        interval: '1s',
        baseEjectionTime: '30s',
        maxEjectionPercent: 0,
        detectors: {
          totalErrors: { consecutive: 20 },
          gatewayErrors: { consecutive: 10 },
          localErrors: { consecutive: 0 },
          standardDeviation: { requestVolume: 10, minimumHosts: 5, factor: 1.9 },
          failure: { requestVolume: 10, minimumHosts: 5, threshold: 85 },
        },
        thresholds: { maxConnections: 2, maxPendingRequests: 2, maxRetries: 2, maxRequests: 2 },
      }),
    );
  });

  it('accepts detectors left to their defaults', () => {
    const body = withConf({ detectors: { totalErrors: {}, standardDeviation: {} } });
    expect(validate(body)).toEqual([]);
    expect(wireForm(circuitBreakerKind, body)).toEqual(body);
  });

  it('requires selectors and a detector or threshold', () => {
    expect(validate({})).toEqual([
      { field: 'sources', message: 'must have at least one element' },
      { field: 'destinations', message: 'must have at least one element' },
      { field: 'conf', message: 'must have at least one of the detector or threshold configured' },
    ]);
    expect(validate(withConf({ interval: '1s', detectors: {}, thresholds: {} }))).toEqual([
      { field: 'conf', message: 'must have at least one of the detector or threshold configured' },
    ]);
  });

  it('refuses percentages above 100', () => {
    expect(
      validate({
        sources: [{ match: { 'mesh.io/service': 'web', region: 'eu' } }],
        destinations: [{ match: { 'mesh.io/service': 'backend', region: 'eu' } }],
        conf: { maxEjectionPercent: 120, detectors: { failure: { threshold: 850 } } },
      }),
    ).toEqual([
      { field: 'destinations[0].match', message: 'must consist of exactly one tag "mesh.io/service"' },
      { field: 'destinations[0].match["region"]', message: 'tag "region" is not allowed' },
      { field: 'conf.maxEjectionPercent', message: 'has to be in [0.0 - 100.0] range' },
      { field: 'conf.detectors.failure.threshold', message: 'has to be in [0.0 - 100.0] range' },
    ]);
  });

  it('refuses an empty detectors or thresholds section next to a configured one', () => {
    expect(validate(withConf({ detectors: { totalErrors: {} }, thresholds: {} }))).toEqual([
      { field: 'conf.thresholds', message: "can't be empty" },
    ]);
    expect(validate(withConf({ detectors: {}, thresholds: { maxConnections: 2 } }))).toEqual([
      { field: 'conf.detectors', message: "can't be empty" },
    ]);
  });

  it('refuses fields of the wrong JSON type', () => {
    expect(() => validate(withConf({ thresholds: { maxConnections: 1.5 } }))).toThrow();
    expect(() => validate(withConf({ splitExternalAndLocalErrors: 'yes', thresholds: { maxConnections: 1 } }))).toThrow();
  });
});
