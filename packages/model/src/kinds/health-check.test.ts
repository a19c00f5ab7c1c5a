import { describe, expect, it } from 'vitest';
import { violationsOf, wireForm } from '../test-support.js';
import { healthCheckKind } from './health-check.js';

const validate = (body: unknown) => violationsOf(healthCheckKind, body);

const selectors = {
  sources: [{ match: { 'mesh.io/service': 'web', region: 'eu' } }],
  destinations: [{ match: { 'mesh.io/service': 'backend' } }],
};
const basicConf = { interval: '3s', timeout: '10s', unhealthyThreshold: 3, healthyThreshold: 1 };

describe('HealthCheck', () => {
  it('accepts a full HTTP check and returns it in the normalised form', () => {
    const body = {
      ...selectors,
      conf: {
        ...basicConf,
        initial_jitter: '500ms',
        intervalJitter: '1m',
        intervalJitterPercent: 10,
        healthyPanicThreshold: 0,
        failTrafficOnPanic: false,
        eventLogPath: '/tmp/hc.log',
        noTrafficInterval: '1h',
        reuseConnection: false,
        http: {
          path: '/health',
          requestHeadersToAdd: [{ append: false, header: { key: 'x-probe', value: 'mesh' } }],
          expectedStatuses: [200, '204'],
          useHttp1: true,
        },
      },
    };
    expect(validate(body)).toEqual([]);
    expect(wireForm(healthCheckKind, body)).toEqual({
      ...selectors,
      conf: {
        interval: '3s',
        timeout: '10s',
        unhealthyThreshold: 3,
        healthyThreshold: 1,
        initialJitter: '0.500s',
        intervalJitter: '60s',
        intervalJitterPercent: 10,
        healthyPanicThreshold: 0,
        failTrafficOnPanic: false,
        eventLogPath: '/tmp/hc.log',
        noTrafficInterval: '3600s',
        reuseConnection: false,
        http: {
          path: '/health',
          requestHeadersToAdd: [{ append: false, header: { key: 'x-probe', value: 'mesh' } }],
          expectedStatuses: [200, 204],
          useHttp1: true,
        },
      },
    });
  });

  it('keeps useHttp1 as sent, false included', () => {
    const body = { ...selectors, conf: { ...basicConf, http: { path: '/', useHttp1: false } } };
    expect(validate(body)).toEqual([]);
    expect(wireForm(healthCheckKind, body)).toMatchObject({ conf: { http: { path: '/', useHttp1: false } } });
  });

  it('accepts a TCP check with base64 payloads and drops zero plain scalars', () => {
    const body = { ...selectors, conf: { ...basicConf, intervalJitterPercent: 0, eventLogPath: '', tcp: { send: 'Zm9v\n', receive: ['YmFy', ''] } } };
    expect(validate(body)).toEqual([]);
    // Line breaks in base64 are ignored, as the reference's decoder does.
    expect(wireForm(healthCheckKind, body)).toEqual({ ...selectors, conf: { ...basicConf, tcp: { send: 'Zm9v', receive: ['YmFy', ''] } } });
  });

  it('refuses payloads that are not base64 and fields of the wrong JSON type', () => {
    expect(() => validate({ conf: { tcp: { send: 'not base64!' } } })).toThrow();
    expect(() => validate({ conf: { interval: 3 } })).toThrow();
    expect(() => validate({ conf: { http: { useHttp1: 'yes' } } })).toThrow();
    expect(() => validate({ conf: { http: { expectedStatuses: [-1] } } })).toThrow();
  });

  it('requires selectors and conf', () => {
    expect(validate({})).toEqual([
      { field: 'sources', message: 'must have at least one element' },
      { field: 'destinations', message: 'must have at least one element' },
      { field: 'conf', message: 'has to be defined' },
    ]);
  });

  it('reports selectors without tags', () => {
    expect(validate({ sources: [{ match: {} }], destinations: [{ match: {} }] })).toEqual([
      { field: 'sources[0].match', message: 'must have at least one tag' },
      { field: 'sources[0].match', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'destinations[0].match', message: 'must consist of exactly one tag "mesh.io/service"' },
      { field: 'destinations[0].match', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'conf', message: 'has to be defined' },
    ]);
  });

  it('reports every invalid check setting', () => {
    expect(
      validate({
        ...selectors,
        conf: {
          interval: '0s',
          timeout: '0s',
          unhealthyThreshold: 0,
          healthyThreshold: 0,
          initialJitter: '0s',
          intervalJitter: '0s',
          healthyPanicThreshold: 101,
          noTrafficInterval: '0s',
          http: {
            path: '',
            requestHeadersToAdd: [{ header: { value: 'foo' } }, { append: false }],
            expectedStatuses: [99, 600],
          },
        },
      }),
    ).toEqual([
      { field: 'conf.interval', message: 'must have a positive value' },
      { field: 'conf.timeout', message: 'must have a positive value' },
      { field: 'conf.unhealthyThreshold', message: 'must have a positive value' },
      { field: 'conf.healthyThreshold', message: 'must have a positive value' },
      { field: 'conf.initialJitter', message: 'must have a positive value' },
      { field: 'conf.intervalJitter', message: 'must have a positive value' },
      { field: 'conf.noTrafficInterval', message: 'must have a positive value' },
      { field: 'conf.healthyPanicThreshold', message: 'must be in range [0.0 - 100.0]' },
      { field: 'conf.http.path', message: 'has to be defined and cannot be empty' },
      { field: 'conf.http.expectedStatuses[0]', message: 'must be in range [100, 600)' },
      { field: 'conf.http.expectedStatuses[1]', message: 'must be in range [100, 600)' },
      { field: 'conf.http.requestHeadersToAdd[0].header.key', message: 'cannot be empty' },
      { field: 'conf.http.requestHeadersToAdd[1].header', message: 'has to be defined' },
    ]);
  });

  it('reports missing durations and thresholds of an empty conf', () => {
    expect(validate({ ...selectors, conf: {} })).toEqual([
      { field: 'conf.interval', message: 'must have a positive value' },
      { field: 'conf.timeout', message: 'must have a positive value' },
      { field: 'conf.unhealthyThreshold', message: 'must have a positive value' },
      { field: 'conf.healthyThreshold', message: 'must have a positive value' },
    ]);
  });

  it('refuses http and tcp together', () => {
    expect(validate({ ...selectors, conf: { ...basicConf, http: {}, tcp: {} } })).toEqual([
      { field: 'conf.http.path', message: 'has to be defined and cannot be empty' },
      { field: 'conf', message: 'http and tcp cannot be defined at the same time' },
    ]);
  });
});
