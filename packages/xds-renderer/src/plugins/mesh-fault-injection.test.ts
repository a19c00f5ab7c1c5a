// MeshFaultInjection: fault filters on the HTTP inbounds, per client rule, a FaultInjection first.
import { describe, expect, it } from 'vitest';
import type { JsonObject, Listener } from '../envoy.js';
import type { ProxyConfig } from '../proxy.js';
import { policy, targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const topology = targetRefTopology('STRICT');

const faults = targetRefPolicy('MeshFaultInjection', 'faults', {
  targetRef: { kind: 'Mesh' },
  from: [
    { targetRef: { kind: 'Mesh' }, default: { http: [{ delay: { value: '2s', percentage: 10 } }] } },
    {
      targetRef: { kind: 'MeshService', name: 'frontend' },
      default: { http: [{ abort: { httpStatus: 503, percentage: '12.5' }, responseBandwidth: { limit: '100 mbps', percentage: '62.9' } }] },
    },
  ],
});

const httpFilters = (config: ProxyConfig, name: string): JsonObject[] => {
  const listener = config.listeners.find((candidate) => candidate.name === name) as Listener;
  const hcm = (((listener.filterChains as JsonObject[])[0]?.filters as JsonObject[]).at(-1) as JsonObject).typedConfig as JsonObject;
  return (hcm.httpFilters as JsonObject[]) ?? [];
};

describe('MeshFaultInjection', () => {
  const before = topology.render(topology.web1, {});
  const after = topology.render(topology.web1, { MeshFaultInjection: [faults] });

  it('adds fault filters as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-fault-injection.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('adds a filter per fault of each client rule before the router, matching the clients by their tags', () => {
    const filters = httpFilters(after, 'inbound:10.0.0.1:8080');
    expect(filters.map((filter) => filter.name)).toEqual(['envoy.filters.http.fault', 'envoy.filters.http.fault', 'envoy.filters.http.router']);
    expect(filters[0]?.typedConfig).toMatchObject({
      abort: { httpStatus: 503, percentage: { numerator: 1250, denominator: 'TEN_THOUSAND' } },
      responseRateLimit: { fixedLimit: { limitKbps: '100000' }, percentage: { numerator: 6290, denominator: 'TEN_THOUSAND' } },
      // As the reference writes it: dots of values escaped, of keys not.
      headers: [{ name: 'x-mesh-tags', stringMatch: { safeRegex: { googleRe2: {}, regex: '.*&mesh.io/service=[^&]*frontend[,&].*' } } }],
    });
    // Everyone but frontend.
    expect(filters[1]?.typedConfig).toMatchObject({ delay: { fixedDelay: '2s', percentage: { numerator: 10 } }, headers: [expect.objectContaining({ invertMatch: true })] });
    // TCP inbounds get none.
    expect(httpFilters(after, 'inbound:10.0.0.1:8100')).toEqual([]);
  });

  it('leaves an inbound to the FaultInjection that applies to it', () => {
    const legacy = policy('FaultInjection', 'fi', { sources: [{ match: { 'mesh.io/service': '*' } }], destinations: [{ match: { 'mesh.io/service': 'web' } }], conf: { abort: { percentage: 50, httpStatus: 500 } } });
    const withLegacy = targetRefTopology('STRICT', { extraPolicies: { FaultInjection: [legacy] } });
    const config = withLegacy.render(withLegacy.web1, { MeshFaultInjection: [faults] });
    expect(httpFilters(config, 'inbound:10.0.0.1:8080').map((filter) => (filter.typedConfig as JsonObject).abort)).toEqual([{ httpStatus: 500, percentage: { numerator: 50 } }, undefined]);
  });
});
