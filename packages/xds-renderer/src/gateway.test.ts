// Builtin gateways: listeners per port, virtual hosts and routes from the MeshGatewayRoutes, a
// cluster per destination with its connection policies, all valid Envoy.
import { describe, expect, it } from 'vitest';
import type { JsonObject } from './envoy.js';
import { renderProxyConfig } from './proxy.js';
import { dataplane, meshContextOf, meshSpec, policy } from './test-fixtures.js';
import { expectEnvoyAccepts, expectGolden } from './testing/golden.js';

const ANY = [{ match: { 'mesh.io/service': '*' } }];
const gatewayProxy = dataplane('edge-1', { address: '192.168.1.1', gateway: { type: 'BUILTIN', tags: { 'mesh.io/service': 'edge' } } });
const backend = (name: string, address: string, version: string) =>
  dataplane(name, { address, inbound: [{ port: 8080, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', version } }] });
const backendDestination = (version?: string) => ({ 'mesh.io/service': 'backend', ...(version ? { version } : {}) });

const gateway = policy('MeshGateway', 'edge', {
  selectors: [{ match: { 'mesh.io/service': 'edge' } }],
  conf: {
    listeners: [
      { port: 8080, protocol: 'HTTP', tags: { port: 'http' } },
      { port: 8080, protocol: 'HTTP', hostname: 'quiet.example.com', tags: { port: 'http' } },
      { port: 9000, protocol: 'TCP', tags: { port: 'tcp' } },
    ],
  },
});
const httpRoute = policy('MeshGatewayRoute', 'edge-http', {
  selectors: [{ match: { 'mesh.io/service': 'edge', port: 'http' } }],
  conf: {
    http: {
      rules: [
        {
          matches: [{ path: { match: 'PREFIX', value: '/v1' }, method: 'GET', queryParameters: [{ match: 'EXACT', name: 'debug', value: '1' }] }],
          filters: [{ requestHeader: { set: [{ name: 'x-env', value: 'prod' }], remove: ['x-internal'] } }, { mirror: { backend: { destination: backendDestination('v2') }, percentage: 10 } }],
          backends: [{ weight: 90, destination: backendDestination('v1') }, { weight: 10, destination: backendDestination('v2') }],
        },
        { matches: [{ path: { match: 'EXACT', value: '/moved' } }], filters: [{ redirect: { scheme: 'https', hostname: 'example.com', statusCode: 307 } }] },
        { matches: [{ path: { match: 'PREFIX', value: '/' } }], filters: [{ rewrite: { replacePrefixMatch: '/api' } }], backends: [{ destination: backendDestination() }] },
      ],
    },
  },
});
const tcpRoute = policy('MeshGatewayRoute', 'edge-tcp', { selectors: [{ match: { 'mesh.io/service': 'edge', port: 'tcp' } }], conf: { tcp: { rules: [{ backends: [{ destination: backendDestination('v2') }] }] } } });

const fixture = {
  meshSpec: meshSpec({ mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } }),
  dataplanes: [gatewayProxy, backend('backend-1', '10.0.0.2', 'v1'), backend('backend-2', '10.0.0.3', 'v2')],
  policies: {
    MeshGateway: [gateway],
    MeshGatewayRoute: [httpRoute, tcpRoute],
    Timeout: [policy('Timeout', 'timeout-all', { sources: ANY, destinations: ANY, conf: { connectTimeout: '5s', http: { requestTimeout: '15s', idleTimeout: '3600s' } } })],
    Retry: [policy('Retry', 'retry-all', { sources: ANY, destinations: ANY, conf: { http: { numRetries: 5 } } })],
    CircuitBreaker: [policy('CircuitBreaker', 'cb-all', { sources: ANY, destinations: ANY, conf: { thresholds: { maxConnections: 1024 } } })],
  },
};
const context = meshContextOf(fixture);

describe('builtin gateway', () => {
  const config = renderProxyConfig({ context, dataplane: gatewayProxy });
  const routes = config.routes[0] as JsonObject;
  const hosts = routes.virtualHosts as JsonObject[];

  it('renders the listeners, routes, clusters and endpoints of the golden file, all valid Envoy', () => {
    expectGolden('gateway.golden.json', config);
    expectEnvoyAccepts(config);
  });

  it('has a listener per port, HTTP ones over RDS', () => {
    expect(config.listeners.map((listener) => listener.name)).toEqual(['edge:HTTP:8080', 'edge:TCP:9000', 'mesh:envoy:admin'].filter((name) => config.listeners.some((listener) => listener.name === name)));
    expect(config.routes.map((route) => route.name)).toEqual(['edge:HTTP:8080']);
  });

  it('serves a virtual host per hostname, a 404 where no route serves it', () => {
    expect(hosts.map((host) => host.name)).toEqual(['quiet.example.com', '*']);
    // Routes without hostnames serve every host of the listener.
    expect((hosts[0]?.routes as JsonObject[]).length).toBe(4);
    const onlyApi = policy('MeshGatewayRoute', 'edge-http', { ...httpRoute.spec, conf: { http: { ...httpRoute.spec.conf?.http, hostnames: ['api.example.com'] } } });
    const quiet = meshContextOf({ ...fixture, policies: { ...fixture.policies, MeshGatewayRoute: [onlyApi] } });
    const quietHosts = (renderProxyConfig({ context: quiet, dataplane: gatewayProxy }).routes[0] as JsonObject).virtualHosts as JsonObject[];
    expect(quietHosts.map((host) => host.name)).toEqual(['quiet.example.com', 'api.example.com', '*']);
    expect(quietHosts[0]?.routes).toEqual([{ match: { prefix: '/' }, directResponse: { status: 404, body: { inlineString: 'This is a MeshGateway. No routes match this MeshGateway!\n' } } }]);
  });

  it('routes by the matches, with weights, filters and the policies of the destinations', () => {
    // A prefix matches whole path segments: `/v1` itself, and below `/v1/`.
    const v1Route = (hosts[1]?.routes as JsonObject[]).find((route) => (route.match as JsonObject).path === '/v1');
    expect(v1Route?.match).toMatchObject({ headers: [{ name: ':method', stringMatch: { exact: 'GET' } }], queryParameters: [{ name: 'debug', stringMatch: { exact: '1' } }] });
    const action = v1Route?.route as JsonObject;
    expect(((action.weightedClusters as JsonObject).clusters as JsonObject[]).map((cluster) => cluster.weight)).toEqual([90, 10]);
    expect(action).toMatchObject({ timeout: '15s', retryPolicy: { numRetries: 5 }, requestMirrorPolicies: [{ runtimeFraction: { defaultValue: { numerator: 10 } } }] });
    expect(v1Route?.requestHeadersToRemove).toEqual(['x-internal']);
  });

  it('gives every destination a cluster with mesh mTLS and its endpoints', () => {
    const clusters = config.clusters.filter((cluster) => cluster.name.startsWith('backend-'));
    // v1, v2 and any version from the HTTP listener; v2 again from the TCP one, whose tags differ.
    expect(clusters).toHaveLength(4);
    for (const cluster of clusters) {
      expect(cluster).toMatchObject({ type: 'EDS', connectTimeout: '5s', perConnectionBufferLimitBytes: 32768, transportSocket: { name: 'envoy.transport_sockets.tls' } });
      expect(config.endpoints.some((assignment) => assignment.clusterName === cluster.name)).toBe(true);
    }
  });
});

describe('builtin gateway over HTTPS', () => {
  const PEM_CHAIN = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  const PEM_KEY = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';
  const secure = policy('MeshGateway', 'edge', {
    selectors: [{ match: { 'mesh.io/service': 'edge' } }],
    conf: {
      listeners: [
        { port: 8443, protocol: 'HTTPS', hostname: 'secure.example.com', tags: { port: 'http' }, tls: { mode: 'TERMINATE', certificates: [{ secret: 'edge-cert' }] } },
        { port: 8443, protocol: 'HTTPS', hostname: 'nocert.example.com', tags: { port: 'http' }, tls: { mode: 'TERMINATE', certificates: [{ secret: 'missing' }] } },
      ],
    },
  });
  const tlsContext = meshContextOf({
    ...fixture,
    policies: { ...fixture.policies, MeshGateway: [secure] },
    extra: { secrets: new Map([['edge-cert', Buffer.from(PEM_CHAIN + PEM_KEY).toString('base64')]]) },
  });
  const config = renderProxyConfig({ context: tlsContext, dataplane: gatewayProxy });

  it('terminates TLS per hostname with the certificate of its secret, and requires TLS on its hosts', () => {
    const chains = config.listeners.find((listener) => listener.name === 'edge:HTTPS:8443')?.filterChains as JsonObject[];
    // A hostname whose secret is missing gets no chain.
    expect(chains.map((chain) => chain.filterChainMatch)).toEqual([{ serverNames: ['secure.example.com'], transportProtocol: 'tls' }]);
    expect(chains[0]?.transportSocket).toMatchObject({
      typedConfig: { commonTlsContext: { tlsCertificates: [{ certificateChain: { inlineString: PEM_CHAIN }, privateKey: { inlineString: PEM_KEY } }] } },
    });
    const hosts = (config.routes[0] as JsonObject).virtualHosts as JsonObject[];
    expect(hosts.every((host) => host.requireTls === 'ALL')).toBe(true);
    expectEnvoyAccepts(config);
  });
});
