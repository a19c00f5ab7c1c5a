import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshRateLimitKind } from './mesh-rate-limit.js';

const violations = (yaml: string) => specViolationsOf(meshRateLimitKind, parse(yaml));
/** Limits on web's inbound traffic from the whole mesh. */
const limits = (conf: string) => `
targetRef: {kind: MeshService, name: web}
from:
  - targetRef: {kind: Mesh}
    default: ${conf}
`;
const AT = 'spec.from[0].default.local';

describe('MeshRateLimit', () => {
  it('accepts HTTP request and TCP connection limits, or either, or turned off', () => {
    const spec = parse(limits(`
      local:
        http:
          disabled: false
          requestRate: {num: 100, interval: 10s}
          onRateLimit: {status: 429, headers: {add: [{name: x-limited, value: "true"}], set: [{name: retry-after, value: "10"}]}}
        tcp:
          disabled: false
          connectionRate: {num: 100, interval: 100ms}
    `));
    expect(specViolationsOf(meshRateLimitKind, spec)).toEqual([]);
    expect(storedSpec(meshRateLimitKind, spec)).toMatchObject({
      from: [{ default: { local: { http: { onRateLimit: { headers: { set: [{ name: 'retry-after' }], add: [{ name: 'x-limited' }] } } }, tcp: { connectionRate: { interval: '100ms' } } } } }],
    });
    expect(violations(limits('{local: {http: {requestRate: {num: 100, interval: 10s}}}}'))).toEqual([]);
    expect(violations(limits('{local: {tcp: {connectionRate: {num: 100, interval: 1s}}}}'))).toEqual([]);
    expect(violations(limits('{local: {http: {disabled: true}, tcp: {disabled: true}}}'))).toEqual([]);
  });

  it('needs inbound entries from the whole mesh', () => {
    expect(violations('targetRef: {kind: Mesh}')).toEqual([{ field: 'spec.from', message: 'needs at least one item' }]);
    expect(violations(`
      targetRef: {kind: MeshGateway, name: edge}
      from: [{targetRef: {kind: MeshService, name: backend}, default: {local: {tcp: {disabled: true}}}}]
    `)).toEqual([
      { field: 'spec.targetRef.kind', message: 'value is not supported' },
      { field: 'spec.from[0].targetRef.kind', message: 'value is not supported' },
    ]);
  });

  it('needs positive rates over intervals longer than 50ms', () => {
    expect(violations(limits(`
      local:
        http: {requestRate: {num: 0, interval: 49ms}, onRateLimit: {status: 0}}
        tcp: {connectionRate: {num: 0, interval: 50ms}}
    `))).toEqual([
      { field: `${AT}.http.requestRate.num`, message: 'must be greater than 0' },
      { field: `${AT}.http.requestRate.interval`, message: 'must be greater than: 50ms' },
      { field: `${AT}.http.onRateLimit.status`, message: 'must be greater than 0' },
      { field: `${AT}.tcp.connectionRate.num`, message: 'must be greater than 0' },
      { field: `${AT}.tcp.connectionRate.interval`, message: 'must be greater than: 50ms' },
    ]);
  });

  it('needs a local limit with something in it', () => {
    expect(violations(limits('{}'))).toEqual([{ field: AT, message: 'must be defined' }]);
    expect(violations(limits('{local: {}}'))).toEqual([{ field: AT, message: 'must have at least one defined: tcp, http' }]);
    expect(violations(limits('{local: {tcp: {}, http: {}}}'))).toEqual([
      { field: `${AT}.http`, message: 'must have at least one defined: disabled, requestRate, onRateLimit' },
      { field: `${AT}.tcp`, message: 'must have at least one defined: disabled, connectionRate' },
    ]);
  });

  it('checks rates against the schema first', () => {
    expect(violations(limits('{local: {tcp: {connectionRate: {num: "10"}}}}'))).toEqual([
      { field: `${AT}.tcp.connectionRate.num`, message: 'in body must be of type integer: "string"' },
      { field: `${AT}.tcp.connectionRate.interval`, message: 'in body is required' },
    ]);
  });
});
