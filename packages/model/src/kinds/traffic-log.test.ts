import { describe, expect, it } from 'vitest';
import { violationsOf, wireForm } from '../test-support.js';
import { trafficLogKind } from './traffic-log.js';

const validate = (body: unknown) => violationsOf(trafficLogKind, body);

describe('TrafficLog', () => {
  it('accepts a policy with or without a backend', () => {
    const selectors = {
      sources: [{ match: { 'mesh.io/service': 'web', region: 'eu' } }],
      destinations: [{ match: { 'mesh.io/service': '*' } }],
    };
    expect(validate({ ...selectors, conf: { backend: 'file' } })).toEqual([]);
    expect(validate(selectors)).toEqual([]);
  });

  it('keeps the backend and drops an empty one', () => {
    expect(wireForm(trafficLogKind, { conf: { backend: 'logstash', format: 'x' } })).toEqual({ conf: { backend: 'logstash' } });
    expect(wireForm(trafficLogKind, { conf: { backend: '' } })).toEqual({ conf: {} });
  });

  it('requires sources and destinations', () => {
    expect(validate({})).toEqual([
      { field: 'sources', message: 'must have at least one element' },
      { field: 'destinations', message: 'must have at least one element' },
    ]);
  });

  it('requires the service tag in sources and only the service tag in destinations', () => {
    expect(
      validate({
        sources: [{ match: {} }, { match: { region: 'eu' } }],
        destinations: [{ match: {} }, { match: { 'mesh.io/service': 'backend', version: '' } }],
      }),
    ).toEqual([
      { field: 'sources[0].match', message: 'must have at least one tag' },
      { field: 'sources[0].match', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'sources[1].match', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'destinations[0].match', message: 'must consist of exactly one tag "mesh.io/service"' },
      { field: 'destinations[0].match', message: 'mandatory tag "mesh.io/service" is missing' },
      { field: 'destinations[1].match', message: 'must consist of exactly one tag "mesh.io/service"' },
      { field: 'destinations[1].match["version"]', message: 'tag "version" is not allowed' },
      { field: 'destinations[1].match["version"]', message: 'tag value must be non-empty' },
    ]);
  });

  it('refuses a backend of the wrong JSON type', () => {
    expect(() => validate({ conf: { backend: 1 } })).toThrow();
  });
});
