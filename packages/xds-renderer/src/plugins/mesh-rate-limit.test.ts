// MeshRateLimit: local rate limits of HTTP requests and TCP connections on the inbounds.
import { describe, expect, it } from 'vitest';
import type { JsonObject, Listener } from '../envoy.js';
import type { ProxyConfig } from '../proxy.js';
import { policy, targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const limits = targetRefPolicy('MeshRateLimit', 'limits', {
  targetRef: { kind: 'Mesh' },
  from: [
    {
      targetRef: { kind: 'Mesh' },
      default: {
        local: {
          http: { requestRate: { num: 100, interval: '10s' }, onRateLimit: { status: 429, headers: { add: [{ name: 'x-limited', value: 'yes' }], set: [{ name: 'x-limit', value: '100,10s' }] } } },
          tcp: { connectionRate: { num: 5, interval: '1s' } },
        },
      },
    },
  ],
});

const chainOf = (config: ProxyConfig, name: string): JsonObject => ((config.listeners.find((candidate) => candidate.name === name) as Listener).filterChains as JsonObject[])[0] as JsonObject;
const hcmOf = (chain: JsonObject): JsonObject => ((chain.filters as JsonObject[]).find((filter) => filter.name === 'envoy.filters.network.http_connection_manager') as JsonObject).typedConfig as JsonObject;

describe('MeshRateLimit', () => {
  const topology = targetRefTopology('STRICT');
  const before = topology.render(topology.web1, {});
  const after = topology.render(topology.web1, { MeshRateLimit: [limits] });

  it('limits the inbounds as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-rate-limit.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('limits requests per route and connections first in every chain', () => {
    const chain = chainOf(after, 'inbound:10.0.0.1:8080');
    expect((chain.filters as JsonObject[]).map((filter) => filter.name)).toEqual([
      'envoy.extensions.filters.network.local_ratelimit.v3.LocalRateLimit',
      'envoy.filters.network.rbac',
      'envoy.filters.network.http_connection_manager',
    ]);
    const hcm = hcmOf(chain);
    expect((hcm.httpFilters as JsonObject[]).map((filter) => filter.name)).toEqual(['envoy.filters.http.local_ratelimit', 'envoy.filters.http.router']);
    const route = (((hcm.routeConfig as JsonObject).virtualHosts as JsonObject[])[0]?.routes as JsonObject[])[0] as JsonObject;
    expect(route.typedPerFilterConfig).toMatchObject({
      'envoy.filters.http.local_ratelimit': {
        tokenBucket: { maxTokens: 100, tokensPerFill: 100, fillInterval: '10s' },
        status: { code: 'TooManyRequests' },
        responseHeadersToAdd: [
          { header: { key: 'x-limited', value: 'yes' }, append: true },
          { header: { key: 'x-limit', value: '100' }, append: false },
          { header: { key: 'x-limit', value: '10s' }, append: false },
        ],
      },
    });
  });

  it('leaves an inbound to the RateLimit that applies to it', () => {
    const legacy = policy('RateLimit', 'rl', { sources: [{ match: { 'mesh.io/service': 'frontend' } }], destinations: [{ match: { 'mesh.io/service': 'web' } }], conf: { http: { requests: 5, interval: '1s' } } });
    const withLegacy = targetRefTopology('STRICT', { extraPolicies: { RateLimit: [legacy] } });
    const config = withLegacy.render(withLegacy.web1, { MeshRateLimit: [limits] });
    expect(config.listeners.find((listener) => listener.name === 'inbound:10.0.0.1:8080')).toEqual(withLegacy.render(withLegacy.web1, {}).listeners.find((listener) => listener.name === 'inbound:10.0.0.1:8080'));
  });
});
