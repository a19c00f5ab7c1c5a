import { describe, expect, it } from 'vitest';
import { violationsOf, wireForm } from '../test-support.js';
import { trafficTraceKind } from './traffic-trace.js';

const validate = (body: unknown) => violationsOf(trafficTraceKind, body);

describe('TrafficTrace', () => {
  it('accepts selectors with any tags, with or without a backend', () => {
    expect(validate({ selectors: [{ match: { 'mesh.io/service': '*' } }], conf: { backend: 'zipkin' } })).toEqual([]);
    expect(validate({ selectors: [{ match: { region: 'eu' } }] })).toEqual([]);
  });

  it('keeps the backend as sent and drops unknown fields', () => {
    expect(wireForm(trafficTraceKind, { selectors: [{ match: { app: 'web' } }], conf: { backend: 'jaeger', sampling: 5 }, sources: [] })).toEqual({
      selectors: [{ match: { app: 'web' } }],
      conf: { backend: 'jaeger' },
    });
  });

  it('requires at least one selector, each with at least one valid tag', () => {
    expect(validate({})).toEqual([{ field: 'selectors', message: 'must have at least one element' }]);
    expect(validate({ selectors: [{ match: {} }, { match: { 'mesh.io/service': 'a b' } }] })).toEqual([
      { field: 'selectors[0].match', message: 'must have at least one tag' },
      {
        field: 'selectors[1].match["mesh.io/service"]',
        message: 'tag value must consist of alphanumeric characters, dots, dashes, slashes and underscores or be "*"',
      },
    ]);
  });

  it('refuses selectors of the wrong JSON type', () => {
    expect(() => validate({ selectors: { match: {} } })).toThrow();
  });
});
