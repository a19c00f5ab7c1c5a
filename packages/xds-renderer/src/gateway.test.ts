// Builtin gateways: listeners per port, virtual hosts and routes from the MeshGatewayRoutes, a
// cluster per destination with its connection policies, all valid Envoy.
import { describe, expect, it } from 'vitest';
import type { JsonObject } from './envoy.js';
import { renderProxyConfig } from './proxy.js';
import { dataplane, meshContextOf, meshSpec, policy, targetRefMatchOf, targetRefPolicy } from './test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from './testing/golden.js';

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

describe('builtin gateway with TrafficLog, TrafficTrace and a TCP Retry', () => {
  const observed = meshContextOf({
    ...fixture,
    meshSpec: meshSpec({
      mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] },
      logging: { backends: [{ name: 'file', type: 'file', conf: { path: '/tmp/edge.log' } }] },
      tracing: { backends: [{ name: 'zipkin', type: 'zipkin', conf: { url: 'http://zipkin:9411/api/v2/spans' } }] },
    }),
    policies: {
      ...fixture.policies,
      TrafficLog: [policy('TrafficLog', 'logs', { sources: ANY, destinations: ANY, conf: { backend: 'file' } })],
      TrafficTrace: [policy('TrafficTrace', 'traces', { selectors: ANY, conf: { backend: 'zipkin' } })],
      Retry: [policy('Retry', 'retry-all', { sources: ANY, destinations: ANY, conf: { http: { numRetries: 5 }, tcp: { maxConnectAttempts: 3 } } })],
    },
  });
  const config = renderProxyConfig({ context: observed, dataplane: gatewayProxy });
  const filterOf = (listener: string) => ((config.listeners.find((candidate) => candidate.name === listener)?.filterChains as JsonObject[])[0]?.filters as JsonObject[])[0]?.typedConfig as JsonObject;

  it('logs and traces on every listener, and retries TCP connections as the Retry says', () => {
    expect(filterOf('edge:HTTP:8080')).toMatchObject({ accessLog: [{ typedConfig: { path: '/tmp/edge.log' } }], tracing: { provider: { name: 'envoy.tracers.zipkin' } } });
    expect(filterOf('edge:TCP:9000')).toMatchObject({ accessLog: [{ typedConfig: { path: '/tmp/edge.log' } }], maxConnectAttempts: 3 });
    expect(config.clusters.map((cluster) => cluster.name)).toContain('tracing:zipkin');
    expectEnvoyAccepts(config);
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

describe('targetRef policies on a builtin gateway', () => {
  const MESH = { kind: 'Mesh' };
  const GATEWAY = { kind: 'MeshService', name: 'edge' };
  const to = (conf: object) => [{ targetRef: MESH, default: conf }];
  const policies = {
    MeshTimeout: [targetRefPolicy('MeshTimeout', 'timeouts', { targetRef: GATEWAY, to: to({ connectionTimeout: '2s', http: { requestTimeout: '3s' } }) })],
    MeshRetry: [targetRefPolicy('MeshRetry', 'retries', { targetRef: GATEWAY, to: to({ http: { numRetries: 7 }, tcp: { maxConnectAttempt: 4 } }) })],
    MeshCircuitBreaker: [targetRefPolicy('MeshCircuitBreaker', 'breaker', { targetRef: GATEWAY, to: to({ connectionLimits: { maxConnections: 5 } }) })],
    MeshHealthCheck: [targetRefPolicy('MeshHealthCheck', 'checks', { targetRef: GATEWAY, to: to({ interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1, http: { path: '/health' } }) })],
    MeshAccessLog: [targetRefPolicy('MeshAccessLog', 'logs', { targetRef: GATEWAY, to: to({ backends: [{ type: 'File', file: { path: '/tmp/gateway.log' } }] }) })],
    MeshTrace: [targetRefPolicy('MeshTrace', 'trace', { targetRef: GATEWAY, default: { backends: [{ type: 'Zipkin', zipkin: { url: 'http://zipkin:9411/api/v2/spans' } }] } })],
    MeshFaultInjection: [targetRefPolicy('MeshFaultInjection', 'faults', { targetRef: GATEWAY, from: [{ targetRef: MESH, default: { http: [{ abort: { httpStatus: 503, percentage: 50 } }] } }] })],
    MeshRateLimit: [targetRefPolicy('MeshRateLimit', 'limits', { targetRef: GATEWAY, from: [{ targetRef: MESH, default: { local: { http: { requestRate: { num: 100, interval: '1s' } }, tcp: { connectionRate: { num: 10, interval: '1s' } } } } }] })],
    MeshLoadBalancingStrategy: [targetRefPolicy('MeshLoadBalancingStrategy', 'balancing', { targetRef: GATEWAY, to: to({ loadBalancer: { type: 'RingHash', ringHash: { hashPolicies: [{ type: 'Header', header: { name: 'x-user' } }] } } }) })],
  };
  const before = renderProxyConfig({ context, dataplane: gatewayProxy });
  const after = renderProxyConfig({ context, dataplane: gatewayProxy, targetRef: targetRefMatchOf(context, gatewayProxy, policies) });
  const httpListener = after.listeners.find((listener) => listener.name === 'edge:HTTP:8080') as JsonObject;
  const hcm = ((httpListener.filterChains as JsonObject[])[0]?.filters as JsonObject[]).find((filter) => filter.name === 'envoy.filters.network.http_connection_manager')?.typedConfig as JsonObject;
  const routes = ((after.routes[0] as JsonObject).virtualHosts as JsonObject[]).flatMap((host) => host.routes as JsonObject[]).filter((route) => route.route);

  it('changes the gateway resources as the golden file shows, all valid Envoy', () => {
    expectGolden('gateway-target-ref.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('configures every forwarding route: timeout, retries, hash policy and token bucket', () => {
    for (const route of routes) {
      expect(route.route).toMatchObject({ timeout: '3s', retryPolicy: { numRetries: 7 }, hashPolicy: [{ header: { headerName: 'x-user' } }] });
      expect(route.typedPerFilterConfig).toHaveProperty(['envoy.filters.http.local_ratelimit']);
    }
  });

  it('configures the destination clusters: connect timeout, limits, health checks and load balancer', () => {
    const clusters = after.clusters.filter((candidate) => candidate.name.startsWith('backend-'));
    for (const cluster of clusters) {
      expect(cluster).toMatchObject({ connectTimeout: '2s', lbPolicy: 'RING_HASH', circuitBreakers: { thresholds: [expect.objectContaining({ maxConnections: 5 })] } });
    }
    // An HTTP check for the clusters of HTTP routes; the TCP route's cluster gets none (no TCP check configured).
    expect(clusters.map((cluster) => (cluster.healthChecks as JsonObject[] | undefined)?.[0]?.httpHealthCheck !== undefined)).toEqual(clusters.map((cluster) => cluster.typedExtensionProtocolOptions !== undefined));
  });

  it('configures the listeners: access log, tracing, faults, and TCP retries and connection limits', () => {
    expect(hcm).toMatchObject({ accessLog: [expect.objectContaining({ name: 'envoy.access_loggers.file' })], tracing: expect.any(Object) });
    expect((hcm.httpFilters as JsonObject[]).map((filter) => filter.name)).toContain('envoy.filters.http.fault');
    const tcpChain = (after.listeners.find((listener) => listener.name === 'edge:TCP:9000')?.filterChains as JsonObject[])[0] as JsonObject;
    expect((tcpChain.filters as JsonObject[]).map((filter) => (filter.typedConfig as JsonObject).statPrefix)).toEqual(['tcp_rate_limit', 'edge']);
    expect(((tcpChain.filters as JsonObject[])[1]?.typedConfig as JsonObject).maxConnectAttempts).toBe(4);
  });
});
