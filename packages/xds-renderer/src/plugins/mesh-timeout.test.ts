// MeshTimeout on web-1: inbound and outbound timeouts, defaults for an inbound no policy selects.
import { describe, expect, it } from 'vitest';
import type { Cluster, JsonObject, Listener } from '../envoy.js';
import { targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const topology = targetRefTopology('STRICT');

const timeouts = targetRefPolicy('MeshTimeout', 'web-timeouts', {
  targetRef: { kind: 'MeshService', name: 'web' },
  from: [{ targetRef: { kind: 'Mesh' }, default: { connectionTimeout: '2s', idleTimeout: '20s', http: { requestTimeout: '10s', streamIdleTimeout: '5s', maxStreamDuration: '30s' } } }],
  to: [
    { targetRef: { kind: 'Mesh' }, default: { http: { requestTimeout: '20s' } } },
    { targetRef: { kind: 'MeshService', name: 'backend' }, default: { connectionTimeout: '1s', idleTimeout: '2m', http: { requestTimeout: '3s', maxConnectionDuration: '1h' } } },
    { targetRef: { kind: 'MeshService', name: 'redis' }, default: { idleTimeout: '45s' } },
  ],
});

const before = topology.render(topology.web1, {});
const after = topology.render(topology.web1, { MeshTimeout: [timeouts] });
const listener = (name: string) => after.listeners.find((candidate) => candidate.name === name) as Listener;
const cluster = (name: string) => after.clusters.find((candidate) => candidate.name === name) as Cluster;
const filterConfig = (resource: Listener, chain = 0) => ((resource.filterChains as JsonObject[])[chain]?.filters as JsonObject[]).at(-1)?.typedConfig as JsonObject;

describe('MeshTimeout', () => {
  it('changes the timeouts of listeners and clusters as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-timeout.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('sets the outbound clusters and routes of each service from its rule', () => {
    expect(cluster('backend').connectTimeout).toBe('1s');
    expect(cluster('backend').typedExtensionProtocolOptions).toMatchObject({
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { commonHttpProtocolOptions: { idleTimeout: '120s', maxStreamDuration: '0s', maxConnectionDuration: '3600s' } },
    });
    const backendRoutes = ((filterConfig(listener('outbound:127.0.0.1:10001')).routeConfig as JsonObject).virtualHosts as JsonObject[])[0]?.routes as JsonObject[];
    expect(backendRoutes.map((route) => route.route)).toEqual([expect.objectContaining({ timeout: '3s', idleTimeout: '1800s' })]);
    // The Mesh entry applies to destinations without one of their own.
    expect(cluster('other-backend').connectTimeout).toBe('5s');
    expect(filterConfig(listener('outbound:127.0.0.1:10002')).idleTimeout).toBe('45s');
    expect(cluster('redis').connectTimeout).toBe('5s');
  });

  it('sets the selected inbound from its client rule, and gives an inbound no policy selects the defaults', () => {
    expect(cluster('localhost:8081').connectTimeout).toBe('2s');
    const webRoutes = ((filterConfig(listener('inbound:10.0.0.1:8080')).routeConfig as JsonObject).virtualHosts as JsonObject[])[0]?.routes as JsonObject[];
    expect(webRoutes[0]?.route).toMatchObject({ timeout: '10s', idleTimeout: '5s' });
    expect(filterConfig(listener('inbound:10.0.0.1:8080')).commonHttpProtocolOptions).toEqual({ idleTimeout: '0s' });
    expect(filterConfig(listener('inbound:10.0.0.1:8100')).idleTimeout).toBe('3600s');
    expect(cluster('localhost:8100').connectTimeout).toBe('5s');
  });

  it('changes nothing for a proxy it does not select', () => {
    expect(topology.render(topology.backend1, { MeshTimeout: [timeouts] })).toEqual(topology.render(topology.backend1, {}));
  });
});
