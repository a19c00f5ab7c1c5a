// Tests only: a mesh with the default policies of a new mesh, where targetRef policies are
// applied to `web-1` (HTTP and TCP inbounds; HTTP, TCP, gRPC and external outbounds), `backend-1`
// and a transparent proxy, two zones of backends and an external service.
import type { DataplaneResource, PoliciesByKind, TargetRefPoliciesByKind } from '@mesh/policy-matcher';
import type { MeshContext } from '../mesh-context.js';
import { type ProxyConfig, renderProxyConfig } from '../proxy.js';
import type { ProxyMetadata } from '../proxy-state.js';
import { dataplane, externalService, meshContextOf, meshSpec, policy, targetRefMatchOf, zoneEgress } from '../test-fixtures.js';
import type { MtlsMode } from './topologies.js';

const ANY = [{ match: { 'mesh.io/service': '*' } }];
const BACK_OFF = { baseInterval: '0.025s', maxInterval: '0.250s' };

export interface TargetRefTopology {
  readonly context: MeshContext;
  readonly web1: DataplaneResource;
  readonly backend1: DataplaneResource;
  readonly transparent: DataplaneResource;
  readonly metadata: ProxyMetadata;
  /** Renders a proxy of the mesh with these targetRef policies. */
  render(dataplane: DataplaneResource, policies: TargetRefPoliciesByKind): ProxyConfig;
}

const PEM = { certificatePem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', privateKeyPem: '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n' };

/** `extraPolicies` are source/destination policies besides the mesh's default ones. */
export function targetRefTopology(mtls: MtlsMode = 'STRICT', options: { zoneEgress?: boolean; extraPolicies?: PoliciesByKind } = {}): TargetRefTopology {
  const web1 = dataplane('web-1', {
    address: '10.0.0.1',
    inbound: [
      { port: 8080, servicePort: 8081, tags: { 'mesh.io/service': 'web', 'mesh.io/protocol': 'http', version: 'v1', 'mesh.io/zone': 'west' } },
      { port: 8100, tags: { 'mesh.io/service': 'web-tcp', 'mesh.io/protocol': 'tcp', 'mesh.io/zone': 'west' } },
    ],
    outbound: [
      { port: 10001, tags: { 'mesh.io/service': 'backend' } },
      { port: 10002, tags: { 'mesh.io/service': 'redis' } },
      { port: 10003, tags: { 'mesh.io/service': 'grpc-api' } },
      { port: 10004, tags: { 'mesh.io/service': 'httpbin' } },
      { port: 10005, tags: { 'mesh.io/service': 'other-backend' } },
    ],
  });
  const zoned = (name: string, address: string, port: number, tags: Record<string, string>) => dataplane(name, { address, inbound: [{ port, tags }] });
  const backend1 = zoned('backend-1', '10.0.0.2', 9090, { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', version: 'v1', 'mesh.io/zone': 'west' });
  const backend2 = zoned('backend-2', '10.0.0.3', 9090, { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', version: 'v2', 'mesh.io/zone': 'west' });
  const backendEast = zoned('backend-3', '10.1.0.3', 9090, { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', version: 'v2', 'mesh.io/zone': 'east' });
  const other = zoned('other-backend-1', '10.0.0.6', 9090, { 'mesh.io/service': 'other-backend', 'mesh.io/protocol': 'http', 'mesh.io/zone': 'west' });
  const redis = zoned('redis-1', '10.0.0.5', 6379, { 'mesh.io/service': 'redis', 'mesh.io/protocol': 'tcp', 'mesh.io/zone': 'west' });
  const grpcApi = zoned('grpc-api-1', '10.0.0.7', 7000, { 'mesh.io/service': 'grpc-api', 'mesh.io/protocol': 'grpc', 'mesh.io/zone': 'west' });
  const transparent = dataplane('tp-1', {
    address: '10.0.0.8',
    inbound: [{ port: 8080, tags: { 'mesh.io/service': 'tp', 'mesh.io/protocol': 'http' } }],
    outbound: [{ port: 10001, tags: { 'mesh.io/service': 'backend' } }],
    transparentProxying: { redirectPortInbound: 15006, redirectPortOutbound: 15001 },
  });
  const httpbin = externalService('httpbin', {
    networking: { address: 'httpbin.org:443', tls: { enabled: true, serverName: 'httpbin.org' } },
    tags: { 'mesh.io/service': 'httpbin', 'mesh.io/protocol': 'http' },
  });
  const mtlsConf = mtls === 'off' ? {} : { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin', ...(mtls === 'PERMISSIVE' ? { mode: 'PERMISSIVE' } : {}) }] } };
  const legacy = <K extends 'TrafficPermission' | 'TrafficRoute' | 'Timeout' | 'CircuitBreaker' | 'Retry'>(type: K, prefix: string, conf?: object) =>
    policy(type, `${prefix}-default`, { sources: ANY, destinations: ANY, ...(conf ? { conf } : {}) });
  const context = meshContextOf({
    meshSpec: meshSpec({ ...mtlsConf, ...(options.zoneEgress ? { routing: { zoneEgress: true } } : {}) }),
    dataplanes: [web1, backend1, backend2, backendEast, other, redis, grpcApi, transparent],
    externalServices: [httpbin],
    policies: {
      TrafficPermission: [legacy('TrafficPermission', 'allow-all')],
      TrafficRoute: [legacy('TrafficRoute', 'route-all', { destination: { 'mesh.io/service': '*' }, loadBalancer: { roundRobin: {} } })],
      Timeout: [legacy('Timeout', 'timeout-all', { connectTimeout: '5s', tcp: { idleTimeout: '3600s' }, http: { requestTimeout: '15s', idleTimeout: '3600s', streamIdleTimeout: '1800s' } })],
      CircuitBreaker: [legacy('CircuitBreaker', 'circuit-breaker-all', { thresholds: { maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 3 } })],
      Retry: [
        legacy('Retry', 'retry-all', {
          http: { numRetries: 5, perTryTimeout: '16s', backOff: BACK_OFF },
          tcp: { maxConnectAttempts: 5 },
          grpc: { numRetries: 5, perTryTimeout: '16s', backOff: BACK_OFF },
        }),
      ],
      ...options.extraPolicies,
    },
    extra: {
      localZone: 'west',
      tlsReadyServices: ['backend', 'redis', 'grpc-api', 'other-backend'],
      zoneEgresses: [zoneEgress('egress-1', { networking: { address: '10.0.1.1', port: 10002 } })],
    },
  });
  const metadata: ProxyMetadata = { accessLogSocketPath: '/tmp/mesh-al-web-1-default.sock', identity: { ...PEM, caPem: PEM.certificatePem } };
  return {
    context,
    web1,
    backend1,
    transparent,
    metadata,
    render: (proxy, policies) => renderProxyConfig({ context, dataplane: proxy, metadata, targetRef: targetRefMatchOf(context, proxy, policies) }),
  };
}
