// MeshHTTPRoute: the HTTP outbounds rendered from route rules, with filters and weighted backends.
import { describe, expect, it } from 'vitest';
import type { Cluster, JsonObject, Listener } from '../envoy.js';
import { destinationClusterName } from '../names.js';
import type { ProxyConfig } from '../proxy.js';
import { renderProxyConfig } from '../proxy.js';
import { dataplane, meshContextOf, targetRefMatchOf, targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const prefix = (value: string) => ({ path: { type: 'PathPrefix', value } });

const routesOf = (config: ProxyConfig, name: string): JsonObject[] => {
  const listener = config.listeners.find((candidate) => candidate.name === name) as Listener;
  const hcm = ((listener.filterChains as JsonObject[])[0]?.filters as JsonObject[]).at(-1)?.typedConfig as JsonObject;
  return (((hcm.routeConfig as JsonObject).virtualHosts as JsonObject[])[0]?.routes as JsonObject[]) ?? [];
};

describe('MeshHTTPRoute, the reference basic case', () => {
  // web calls backend, whose endpoints are in two regions; a route sends /v1 to backend, /v2 and
  // /v3 to the us region, and requests with ?v1=true to backend.
  const web1 = dataplane('web-1', { address: '192.168.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web', 'mesh.io/protocol': 'http' } }], outbound: [{ port: 10001, tags: { 'mesh.io/service': 'backend' } }] });
  const backend = (name: string, address: string, region: string) => dataplane(name, { address, inbound: [{ port: 8084, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', region } }] });
  const context = meshContextOf({ dataplanes: [web1, backend('backend-eu', '192.168.0.4', 'eu'), backend('backend-us', '192.168.0.5', 'us')] });
  const route = targetRefPolicy('MeshHTTPRoute', 'route-1', {
    targetRef: { kind: 'Mesh' },
    to: [
      {
        targetRef: { kind: 'MeshService', name: 'backend' },
        rules: [
          { matches: [prefix('/v1')], default: { backendRefs: [{ kind: 'MeshService', name: 'backend', weight: 100 }] } },
          { matches: [prefix('/v2'), prefix('/v3')], default: { backendRefs: [{ kind: 'MeshServiceSubset', name: 'backend', tags: { region: 'us' }, weight: 100 }] } },
          { matches: [{ queryParams: [{ type: 'Exact', name: 'v1', value: 'true' }] }], default: { backendRefs: [{ kind: 'MeshService', name: 'backend', weight: 100 }] } },
        ],
      },
    ],
  });
  const config = renderProxyConfig({ context, dataplane: web1, targetRef: targetRefMatchOf(context, web1, { MeshHTTPRoute: [route] }) });
  const us = destinationClusterName({ 'mesh.io/service': 'backend', region: 'us' });

  it('names each route after its matches, splits path prefixes in two and ends with a catch-all to the service', () => {
    const to = (cluster: string) => ({ cluster, timeout: '0s' });
    expect(routesOf(config, 'outbound:127.0.0.1:10001')).toEqual([
      { match: { path: '/v1' }, name: 'bzv64o+joRk33jfDADgGv5ar4QyONO0NEVKnoBfJW/E=', route: to('backend') },
      { match: { prefix: '/v1/' }, name: 'bzv64o+joRk33jfDADgGv5ar4QyONO0NEVKnoBfJW/E=', route: to('backend') },
      { match: { path: '/v2' }, name: 'BRLj9+uPP4C2xD2r8YkH/x30Vn34XWSc48Fj/pHZdTw=', route: to(us) },
      { match: { prefix: '/v2/' }, name: 'BRLj9+uPP4C2xD2r8YkH/x30Vn34XWSc48Fj/pHZdTw=', route: to(us) },
      { match: { path: '/v3' }, name: 'BRLj9+uPP4C2xD2r8YkH/x30Vn34XWSc48Fj/pHZdTw=', route: to(us) },
      { match: { prefix: '/v3/' }, name: 'BRLj9+uPP4C2xD2r8YkH/x30Vn34XWSc48Fj/pHZdTw=', route: to(us) },
      { match: { prefix: '/', queryParameters: [{ name: 'v1', stringMatch: { exact: 'true' } }] }, name: '6B044knLw3l3+wG86HzzF5jnxXsiiMfGbgxvh+ZmU9Y=', route: to('backend') },
      { match: { prefix: '/' }, name: '9Zuf5Tg79OuZcQITwBbQykxAk2u4fRKrwYn3//AL4Yo=', route: to('backend') },
    ]);
  });

  it('renders the listener, its clusters and their endpoints as the reference does', () => {
    const listener = config.listeners.find((candidate) => candidate.name === 'outbound:127.0.0.1:10001') as Listener;
    expect(listener).toMatchObject({
      address: { socketAddress: { address: '127.0.0.1', portValue: 10001 } },
      trafficDirection: 'OUTBOUND',
      metadata: { filterMetadata: { 'io.mesh.tags': { 'mesh.io/service': 'backend' } } },
    });
    expect((listener.filterChains as JsonObject[])[0]?.filters).toEqual([
      {
        name: 'envoy.filters.network.http_connection_manager',
        typedConfig: {
          '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
          statPrefix: 'backend',
          httpFilters: [{ name: 'envoy.filters.http.router', typedConfig: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
          normalizePath: true,
          routeConfig: {
            name: 'outbound:backend',
            validateClusters: false,
            requestHeadersToAdd: [{ header: { key: 'x-mesh-tags', value: '&mesh.io/protocol=http&&mesh.io/service=web&' } }],
            virtualHosts: [{ name: 'backend', domains: ['*'], routes: expect.any(Array) }],
          },
        },
      },
    ]);
    const eds = (name: string): Cluster => ({
      '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
      name,
      type: 'EDS',
      edsClusterConfig: { edsConfig: { ads: {}, resourceApiVersion: 'V3' } },
      typedExtensionProtocolOptions: {
        'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicitHttpConfig: { http2ProtocolOptions: {} } },
      },
    });
    expect(config.clusters.filter((cluster) => cluster.name.startsWith('backend'))).toEqual([eds('backend'), eds(us)]);
    expect(config.endpoints.map((assignment) => [assignment.clusterName, (assignment.endpoints as JsonObject[])[0]?.lbEndpoints])).toEqual([
      ['backend', [expect.objectContaining({ endpoint: { address: { socketAddress: { address: '192.168.0.4', portValue: 8084 } } } }), expect.objectContaining({ endpoint: { address: { socketAddress: { address: '192.168.0.5', portValue: 8084 } } } })]],
      [us, [expect.objectContaining({ endpoint: { address: { socketAddress: { address: '192.168.0.5', portValue: 8084 } } } })]],
    ]);
    expectEnvoyAccepts(config);
  });
});

describe('MeshHTTPRoute with filters, splits and the other policies', () => {
  const topology = targetRefTopology('STRICT');
  const route = targetRefPolicy('MeshHTTPRoute', 'web-routes', {
    targetRef: { kind: 'MeshService', name: 'web' },
    to: [
      {
        targetRef: { kind: 'MeshService', name: 'backend' },
        rules: [
          {
            matches: [{ path: { type: 'Exact', value: '/login' }, method: 'POST', headers: [{ name: 'x-canary', value: 'true' }, { name: 'x-debug', type: 'Present' }, { name: 'x-any', type: 'Prefix' }] }],
            default: {
              filters: [
                { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-set', value: 'a,b' }], add: [{ name: 'x-add', value: 'c' }], remove: ['x-secret'] } },
                { type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [{ name: 'x-served-by', value: 'mesh' }] } },
                { type: 'RequestMirror', requestMirror: { backendRef: { kind: 'MeshService', name: 'other-backend' }, percentage: '12.5' } },
              ],
              backendRefs: [
                { kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v1' }, weight: 90 },
                { kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v2' }, weight: 10 },
              ],
            },
          },
          { matches: [{ path: { type: 'PathPrefix', value: '/old' } }], default: { filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https', hostname: 'new.example.com', port: 8443, statusCode: 302, path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/new' } } }] } },
          { matches: [{ path: { type: 'PathPrefix', value: '/api' } }], default: { filters: [{ type: 'URLRewrite', urlRewrite: { hostname: 'api.internal', path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2/api' } } }], backendRefs: [{ kind: 'MeshService', name: 'other-backend' }] } },
          { matches: [{ path: { type: 'RegularExpression', value: '/static/.*' } }], default: { backendRefs: [{ kind: 'MeshService', name: 'httpbin' }] } },
        ],
      },
    ],
  });
  const before = topology.render(topology.web1, {});
  const after = topology.render(topology.web1, { MeshHTTPRoute: [route] });

  it('replaces the HTTP outbounds as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-http-route.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('splits by weight, mirrors, redirects and rewrites as the rules say', () => {
    const routes = routesOf(after, 'outbound:127.0.0.1:10001');
    const v1 = destinationClusterName({ 'mesh.io/service': 'backend', version: 'v1' });
    const v2 = destinationClusterName({ 'mesh.io/service': 'backend', version: 'v2' });
    expect(routes[0]).toMatchObject({
      match: { path: '/login', headers: [{ name: ':method', stringMatch: { exact: 'POST' } }, { name: 'x-canary', stringMatch: { exact: 'true' } }, { name: 'x-debug', presentMatch: true }, { name: 'x-any', presentMatch: true }] },
      route: { weightedClusters: { clusters: [{ name: v1, weight: 90 }, { name: v2, weight: 10 }] }, requestMirrorPolicies: [{ cluster: 'other-backend', runtimeFraction: { defaultValue: { numerator: 1250, denominator: 'TEN_THOUSAND' } } }] },
      requestHeadersToAdd: [{ header: { key: 'x-set', value: 'a' }, append: false }, { header: { key: 'x-set', value: 'b' }, append: true }, { header: { key: 'x-add', value: 'c' }, append: true }],
      requestHeadersToRemove: ['x-secret'],
      responseHeadersToAdd: [{ header: { key: 'x-served-by', value: 'mesh' }, append: true }],
    });
    expect(routes.slice(1, 3)).toEqual([
      expect.objectContaining({ match: { path: '/old' }, redirect: { hostRedirect: 'new.example.com', portRedirect: 8443, schemeRedirect: 'https', regexRewrite: { pattern: { googleRe2: {}, regex: '.*' }, substitution: '/new' }, responseCode: 'FOUND' } }),
      expect.objectContaining({ match: { prefix: '/old/' }, redirect: expect.objectContaining({ prefixRewrite: '/new' }) }),
    ]);
    expect(routes[4]).toMatchObject({ match: { prefix: '/api/' }, route: { cluster: 'other-backend', hostRewriteLiteral: 'api.internal', prefixRewrite: '/v2/api' } });
    expect(routes[5]).toMatchObject({ match: { safeRegex: { googleRe2: {}, regex: '/static/.*' } }, route: { cluster: 'httpbin', autoHostRewrite: true } });
    expect(routes.at(-1)).toMatchObject({ match: { prefix: '/' }, route: { cluster: 'backend' } });
  });

  it('leaves the TCP and gRPC outbounds to the outbound side, and routes the other HTTP ones to their service', () => {
    for (const name of ['outbound:127.0.0.1:10002', 'outbound:127.0.0.1:10003']) {
      expect(after.listeners.find((listener) => listener.name === name)).toEqual(before.listeners.find((listener) => listener.name === name));
    }
    expect(routesOf(after, 'outbound:127.0.0.1:10005')).toEqual([expect.objectContaining({ match: { prefix: '/' }, route: { cluster: 'other-backend', timeout: '0s' } })]);
    // The clusters of the routes are the outbound side's before any policy (no Timeout, CircuitBreaker or load balancer of the legacy policies).
    const backend = after.clusters.find((cluster) => cluster.name === 'backend') as Cluster;
    expect(backend.connectTimeout).toBeUndefined();
    expect(backend.circuitBreakers).toBeUndefined();
    expect(backend.transportSocket).toMatchObject({ name: 'envoy.transport_sockets.tls' });
  });

  it("lets a MeshTimeout targeting the route set its routes' timeouts, named after their matches", () => {
    const timeout = targetRefPolicy('MeshTimeout', 'route-timeout', { targetRef: { kind: 'MeshHTTPRoute', name: 'web-routes' }, to: [{ targetRef: { kind: 'Mesh' }, default: { http: { requestTimeout: '2s' } } }] });
    const config = topology.render(topology.web1, { MeshHTTPRoute: [route], MeshTimeout: [timeout] });
    const timeouts = routesOf(config, 'outbound:127.0.0.1:10001').map((envoyRoute) => (envoyRoute.route as JsonObject | undefined)?.timeout);
    // The rules' routes (the redirects have no action); the catch-all is no rule of the route, and no rule holds it.
    expect(timeouts).toEqual(['2s', undefined, undefined, '2s', '2s', '2s', '0s']);
    expectEnvoyAccepts(config);
  });
});
