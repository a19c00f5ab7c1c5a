import { describe, expect, it } from 'vitest';
import { violationsOf, wireForm } from '../test-support.js';
import { rateLimitKind } from './rate-limit.js';

const validate = (body: unknown) => violationsOf(rateLimitKind, body);

const selectors = {
  sources: [{ match: { 'mesh.io/service': 'frontend' } }],
  destinations: [{ match: { 'mesh.io/service': 'backend' } }],
};

describe('RateLimit', () => {
  it('accepts the documented example and returns it unchanged', () => {
    const body = {
      ...selectors,
      conf: { http: { requests: 100, interval: '10s', onRateLimit: { status: 429, headers: [{ key: 'x-limited', value: 'true', append: true }] } } },
    };
    expect(validate(body)).toEqual([]);
    expect(wireForm(rateLimitKind, body)).toEqual(body);
  });

  it('accepts any tags and normalises the interval, keeping a false append', () => {
    const body = {
      sources: [{ match: { 'mesh.io/service': 'frontend', 'mesh.io/protocol': 'http' } }],
      destinations: [{ match: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'grpc', 'mesh.io/valid': 'abcd.123-456.under_score_.:80' } }],
      conf: { http: { requests: 10, interval: '500ms', on_rate_limit: { status: 423, headers: [{ key: 'x-mesh-rate-limit', value: 'true', append: false }] } } },
    };
    expect(validate(body)).toEqual([]);
    expect(wireForm(rateLimitKind, body)).toMatchObject({
      conf: { http: { requests: 10, interval: '0.500s', onRateLimit: { status: 423, headers: [{ key: 'x-mesh-rate-limit', value: 'true', append: false }] } } },
    });
  });

  it('accepts an empty conf', () => {
    expect(validate({ ...selectors, conf: {} })).toEqual([]);
  });

  it('requires selectors and conf', () => {
    expect(validate({})).toEqual([
      { field: 'sources', message: 'must have at least one element' },
      { field: 'destinations', message: 'must have at least one element' },
      { field: 'conf', message: 'must have conf' },
    ]);
  });

  it('requires at least one tag in every selector', () => {
    expect(
      validate({
        sources: [{ match: { 'mesh.io/service': '', region: '' } }, { match: {} }],
        destinations: [{ match: {} }],
        conf: { http: { requests: 10, interval: '10s' } },
      }),
    ).toEqual([
      { field: 'sources[0].match["mesh.io/service"]', message: 'tag value must be non-empty' },
      { field: 'sources[0].match["region"]', message: 'tag value must be non-empty' },
      { field: 'sources[1].match', message: 'must have at least one tag' },
      { field: 'destinations[0].match', message: 'must have at least one tag' },
    ]);
  });

  it('requires requests and interval, and a key and value for each header', () => {
    expect(validate({ ...selectors, conf: { http: { requests: 0, onRateLimit: { headers: [{ key: '', value: '' }, { key: 'x', value: 'y' }, { value: 'z' }] } } } })).toEqual([
      { field: 'conf.http.requests', message: 'requests must be set' },
      { field: 'conf.http.interval', message: 'interval must be set' },
      { field: 'conf.http.onRateLimit.header["0"]', message: 'key must be set' },
      { field: 'conf.http.onRateLimit.header["0"]', message: 'value must be set' },
      { field: 'conf.http.onRateLimit.header["2"]', message: 'key must be set' },
    ]);
  });

  it('refuses fields of the wrong JSON type', () => {
    expect(() => validate({ ...selectors, conf: { http: { requests: '10x', interval: '10s' } } })).toThrow();
    expect(() => validate({ ...selectors, conf: { http: { requests: 10, interval: '10s', onRateLimit: { headers: {} } } } })).toThrow();
  });
});
