// MeshTCPRoute: outbounds become TCP proxies to weighted backends.
import { describe, expect, it } from 'vitest';
import type { JsonObject, Listener } from '../envoy.js';
import type { ProxyConfig } from '../proxy.js';
import { targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const tcpRoutes = targetRefPolicy('MeshTCPRoute', 'tcp-routes', {
  targetRef: { kind: 'Mesh' },
  to: [
    { targetRef: { kind: 'MeshService', name: 'redis' }, rules: [{ default: { backendRefs: [{ kind: 'MeshService', name: 'redis', weight: 80 }, { kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v1' }, weight: 20 }] } }] },
    { targetRef: { kind: 'MeshService', name: 'backend' } },
    { targetRef: { kind: 'MeshService', name: 'grpc-api' } },
  ],
});

const chainOf = (config: ProxyConfig, name: string): JsonObject => ((config.listeners.find((listener) => listener.name === name) as Listener).filterChains as JsonObject[])[0] as JsonObject;

describe('MeshTCPRoute', () => {
  const topology = targetRefTopology('STRICT');
  const before = topology.render(topology.web1, {});
  const after = topology.render(topology.web1, { MeshTCPRoute: [tcpRoutes] });

  it('replaces the outbounds it routes as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-tcp-route.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('proxies TCP to the backends by weight, an HTTP outbound too, and nothing where a backend cannot carry it', () => {
    expect(chainOf(after, 'outbound:127.0.0.1:10002').filters).toEqual([
      {
        name: 'envoy.filters.network.tcp_proxy',
        typedConfig: {
          '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
          statPrefix: 'redis',
          weightedClusters: { clusters: [{ name: 'redis', weight: 80 }, { name: expect.stringMatching(/^backend-[0-9a-f]{16}$/), weight: 20 }] },
        },
      },
    ]);
    // A destination without rules sends all its traffic to itself.
    expect((chainOf(after, 'outbound:127.0.0.1:10001').filters as JsonObject[])[0]?.typedConfig).toMatchObject({ statPrefix: 'backend', cluster: 'backend' });
    expect(chainOf(after, 'outbound:127.0.0.1:10003')).toEqual({});
  });

  it('gives way to a MeshHTTPRoute on an HTTP outbound', () => {
    const httpRoute = targetRefPolicy('MeshHTTPRoute', 'http', { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], default: {} }] }] });
    const config = topology.render(topology.web1, { MeshTCPRoute: [tcpRoutes], MeshHTTPRoute: [httpRoute] });
    expect((chainOf(config, 'outbound:127.0.0.1:10001').filters as JsonObject[])[0]?.name).toBe('envoy.filters.network.http_connection_manager');
    expect((chainOf(config, 'outbound:127.0.0.1:10002').filters as JsonObject[])[0]?.name).toBe('envoy.filters.network.tcp_proxy');
    expectEnvoyAccepts(config);
  });
});
