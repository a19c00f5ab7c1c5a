import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { specViolationsOf, storedSpec } from '../test-support.js';
import { meshFaultInjectionKind } from './mesh-fault-injection.js';

const violations = (yaml: string) => specViolationsOf(meshFaultInjectionKind, parse(yaml));
/** Faults injected into backend's inbound traffic from web. */
const faults = (http: string) => `
targetRef: {kind: MeshService, name: backend}
from:
  - targetRef: {kind: MeshService, name: web}
    default:
      http: ${http}
`;
const AT = 'spec.from[0].default.http';

describe('MeshFaultInjection', () => {
  it('accepts aborts, delays and bandwidth limits with integer or decimal percentages', () => {
    const spec = parse(faults(`
      - abort: {httpStatus: 503, percentage: 50}
        delay: {value: 10s, percentage: 5}
      - delay: {value: 500ms, percentage: "5.5"}
      - responseBandwidth: {limit: 100mbps, percentage: 5}
      - abort: {httpStatus: 500, percentage: "50.5"}
    `));
    expect(specViolationsOf(meshFaultInjectionKind, spec)).toEqual([]);
    expect(storedSpec(meshFaultInjectionKind, spec)).toMatchObject({ from: [{ default: { http: [{}, { delay: { value: '500ms', percentage: '5.5' } }, {}, {}] } }] });
  });

  it('accepts an empty list of faults, and clients of every kind but gateways and routes', () => {
    expect(violations(faults('[]'))).toEqual([]);
    expect(violations(`
      targetRef: {kind: MeshSubset, tags: {version: v1}}
      from:
        - {targetRef: {kind: Mesh}}
        - {targetRef: {kind: MeshSubset, tags: {env: dev}}}
        - {targetRef: {kind: MeshServiceSubset, name: web, tags: {version: v2}}}
        - {targetRef: {kind: MeshGateway, name: edge}}
    `)).toEqual([{ field: 'spec.from[3].targetRef.kind', message: 'value is not supported' }]);
  });

  it('keeps statuses in [100, 600), percentages in [0, 100], delays positive and bandwidths in units', () => {
    expect(violations(faults(`
      - abort: {httpStatus: 677, percentage: 111}
      - delay: {value: -5s, percentage: 1111}
      - responseBandwidth: {limit: "1000", percentage: 1111}
    `))).toEqual([
      { field: `${AT}.abort[0].httpStatus`, message: 'must be in range [100, 600)' },
      { field: `${AT}.abort[0].percentage`, message: 'has to be in [0.0 - 100.0] range' },
      { field: `${AT}.delay[1].value`, message: 'must not be negative when defined' },
      { field: `${AT}.delay[1].percentage`, message: 'has to be in [0.0 - 100.0] range' },
      { field: `${AT}.responseBandwidth[2].responseBandwidth`, message: 'has to be in kbps/mbps/gbps units' },
      { field: `${AT}.responseBandwidth[2].percentage`, message: 'has to be in [0.0 - 100.0] range' },
    ]);
  });

  it('needs a percentage that is a number and a bandwidth limit', () => {
    expect(violations(faults(`
      - responseBandwidth: {limit: "1000", percentage: xyz}
      - responseBandwidth: {limit: "", percentage: 1}
    `))).toEqual([
      { field: `${AT}.responseBandwidth[0].responseBandwidth`, message: 'has to be in kbps/mbps/gbps units' },
      { field: `${AT}.responseBandwidth[0].percentage`, message: 'string has to be a valid number' },
      { field: `${AT}.responseBandwidth[1].responseBandwidth`, message: 'must be defined' },
    ]);
  });

  it('checks required fault fields against the schema first', () => {
    expect(violations(faults('[{abort: {}}, {delay: {value: 1s}}]'))).toEqual([
      { field: `${AT}[0].abort.httpStatus`, message: 'in body is required' },
      { field: `${AT}[0].abort.percentage`, message: 'in body is required' },
      { field: `${AT}[1].delay.percentage`, message: 'in body is required' },
    ]);
  });

  it('has no outbound entries', () => {
    expect(storedSpec(meshFaultInjectionKind, { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'Mesh' } }] })).toEqual({ targetRef: { kind: 'Mesh' } });
  });
});
