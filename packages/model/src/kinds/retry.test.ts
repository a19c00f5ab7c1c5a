import { describe, expect, it } from 'vitest';
import { violationsOf, wireForm } from '../test-support.js';
import { retryKind } from './retry.js';

const validate = (body: unknown) => violationsOf(retryKind, body);

const selectors = {
  sources: [{ match: { 'mesh.io/service': 'web', region: 'eu' } }],
  destinations: [{ match: { 'mesh.io/service': 'backend' } }],
};
const withConf = (conf: unknown) => ({ ...selectors, conf });

describe('Retry', () => {
  it('accepts the default retry and returns it unchanged', () => {
    const attempts = { numRetries: 5, perTryTimeout: '16s', backOff: { baseInterval: '0.025s', maxInterval: '0.250s' } };
    const body = {
      sources: [{ match: { 'mesh.io/service': '*' } }],
      destinations: [{ match: { 'mesh.io/service': '*' } }],
      conf: { http: attempts, tcp: { maxConnectAttempts: 5 }, grpc: attempts },
    };
    expect(validate(body)).toEqual([]);
    expect(wireForm(retryKind, body)).toEqual(body);
  });

  it('accepts every protocol, snake_case names and Go durations, and normalises them', () => {
    const body = withConf({
      http: {
        num_retries: 3,
        per_try_timeout: '200ms',
        back_off: { base_interval: '30ms', max_interval: '1.2s' },
        retriable_status_codes: [501, 502],
        retriableMethods: ['GET', 'POST'],
        retryOn: ['all_5xx', 'retriable_status_codes'],
      },
      grpc: { numRetries: 0, perTryTimeout: '200ms', backOff: { baseInterval: '58ms', maxInterval: '1s' }, retry_on: ['cancelled', 'unavailable'] },
      tcp: { max_connect_attempts: 5 },
    });
    expect(wireForm(retryKind, body)).toEqual(
      withConf({
        http: {
          numRetries: 3,
          perTryTimeout: '0.200s',
          backOff: { baseInterval: '0.030s', maxInterval: '1.200s' },
          retriableStatusCodes: [501, 502],
          retriableMethods: ['GET', 'POST'],
          retryOn: ['all_5xx', 'retriable_status_codes'],
        },
        // numRetries is a wrapper: 0 is kept (and then refused).
        grpc: { numRetries: 0, perTryTimeout: '0.200s', backOff: { baseInterval: '0.058s', maxInterval: '1s' }, retryOn: ['cancelled', 'unavailable'] },
        tcp: { maxConnectAttempts: 5 },
      }),
    );
    expect(validate(body)).toEqual([{ field: 'conf.grpc.numRetries', message: 'has to be greater than 0 when defined' }]);
  });

  it('requires selectors and conf', () => {
    expect(validate({})).toEqual([
      { field: 'sources', message: 'must have at least one element' },
      { field: 'destinations', message: 'must have at least one element' },
      { field: 'conf', message: 'has to be defined' },
    ]);
  });

  it('reports selectors with empty tag values', () => {
    expect(
      validate({
        sources: [{ match: { 'mesh.io/service': '', region: '' } }],
        destinations: [{ match: { 'mesh.io/service': '', region: '' } }],
      }),
    ).toEqual([
      { field: 'sources[0].match["mesh.io/service"]', message: 'tag value must be non-empty' },
      { field: 'sources[0].match["region"]', message: 'tag value must be non-empty' },
      { field: 'destinations[0].match', message: 'must consist of exactly one tag "mesh.io/service"' },
      { field: 'destinations[0].match["mesh.io/service"]', message: 'tag value must be non-empty' },
      { field: 'destinations[0].match["region"]', message: 'tag "region" is not allowed' },
      { field: 'destinations[0].match["region"]', message: 'tag value must be non-empty' },
      { field: 'conf', message: 'has to be defined' },
    ]);
  });

  it('requires a protocol section', () => {
    expect(validate(withConf({}))).toEqual([{ field: 'conf', message: 'missing protocol [grpc|http|tcp] configuration' }]);
  });

  it('refuses empty sections', () => {
    expect(validate(withConf({ http: {} }))).toEqual([{ field: 'conf.http', message: 'field cannot be empty' }]);
    expect(validate(withConf({ grpc: { retryOn: [] } }))).toEqual([{ field: 'conf.grpc', message: 'field cannot be empty' }]);
    expect(validate(withConf({ tcp: {} }))).toEqual([{ field: 'conf.tcp.maxConnectAttempts', message: 'has to be greater than 0' }]);
  });

  it('reports zero retries, timeouts and a back-off without a base interval', () => {
    expect(validate(withConf({ http: { numRetries: 0, perTryTimeout: '0', backOff: {}, retriableMethods: ['NONE'] } }))).toEqual([
      { field: 'conf.http.numRetries', message: 'has to be greater than 0 when defined' },
      { field: 'conf.http.perTryTimeout', message: 'has to be greater than 0 when defined' },
      { field: 'conf.http.backOff.baseInterval', message: 'has to be defined' },
      { field: 'conf.http.retriableMethods[0]', message: 'field cannot be empty' },
    ]);
  });

  it('requires status codes when retrying on them', () => {
    expect(validate(withConf({ http: { retryOn: ['all_5xx', 'retriable_status_codes'], retriableStatusCodes: [] } }))).toEqual([
      { field: 'conf.http.retryOn[1]', message: 'retriableStatusCodes cannot be empty when this option is specified' },
    ]);
  });

  it('reports repeated gRPC conditions, sorted by value, before the other gRPC checks', () => {
    expect(
      validate(
        withConf({
          grpc: {
            numRetries: 0,
            backOff: {},
            perTryTimeout: '0',
            retryOn: ['cancelled', 'resource_exhausted', 'cancelled', 'cancelled', 'resource_exhausted', 'internal', 'internal', 'internal'],
          },
        }),
      ),
    ).toEqual([
      { field: 'conf.grpc.retryOn', message: 'repeated value "cancelled" at indexes [0, 2, 3]' },
      { field: 'conf.grpc.retryOn', message: 'repeated value "internal" at indexes [5, 6, 7]' },
      { field: 'conf.grpc.retryOn', message: 'repeated value "resource_exhausted" at indexes [1, 4]' },
      { field: 'conf.grpc.numRetries', message: 'has to be greater than 0 when defined' },
      { field: 'conf.grpc.perTryTimeout', message: 'has to be greater than 0 when defined' },
      { field: 'conf.grpc.backOff.baseInterval', message: 'has to be defined' },
    ]);
  });

  it('checks the maximum back-off interval only once the base one is positive', () => {
    expect(validate(withConf({ grpc: { backOff: { baseInterval: '0', maxInterval: '0s' } } }))).toEqual([
      { field: 'conf.grpc.backOff.baseInterval', message: 'has to be greater than 0' },
    ]);
    expect(validate(withConf({ grpc: { backOff: { baseInterval: '20ms', maxInterval: '0s' } } }))).toEqual([
      { field: 'conf.grpc.backOff.maxInterval', message: 'has to be greater than 0 when defined' },
    ]);
  });

  it('refuses unknown enum names and fields of the wrong JSON type', () => {
    expect(() => validate(withConf({ http: { retryOn: ['5xx'] } }))).toThrow();
    expect(() => validate(withConf({ grpc: { retryOn: ['all_5xx'] } }))).toThrow();
    expect(() => validate(withConf({ http: { retriableMethods: ['get'] } }))).toThrow();
    expect(() => validate(withConf({ tcp: { maxConnectAttempts: -1 } }))).toThrow();
    expect(() => validate(withConf({ http: { perTryTimeout: 16 } }))).toThrow();
  });
});
